package io.outbox.relay.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.outbox.relay.spi.support.PipelineThreads;
import io.outbox.sink.archfixture.MakesAThread;
import org.junit.jupiter.api.Test;

/**
 * A pipeline's threads are made in one place, {@link PipelineThreads}, which names them and sets
 * the pipeline (and lane) in their logging context, so that every line a pipeline logs carries them
 * as fields (docs/metrics.md, "Logs"). A class of the pipeline's code — the core's pipeline, the
 * SPI and its kit, every source and sink — that calls a {@code Thread} constructor itself makes a
 * thread whose lines lack them, and fails the build. Threads the pipelines share (the daemon's HTTP
 * server, the backlog reader, the shutdown hook, the OpenTelemetry SDK's span exporter when tracing
 * is on) are outside these packages.
 */
class ThreadOwnersTest {

  private static final String[] PIPELINE_CODE = {
    "io.outbox.relay.pipeline..", "io.outbox.relay.spi..", "io.outbox.source..", "io.outbox.sink.."
  };

  private static final JavaClasses RELAY =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(location -> !location.contains("/io/outbox/testkit/"))
          .importPackages("io.outbox");

  private static final DescribedPredicate<JavaConstructorCall> A_THREAD =
      DescribedPredicate.describe(
          "a constructor of java.lang.Thread",
          call -> call.getTargetOwner().isEquivalentTo(Thread.class));

  private static ArchRule onlyPipelineThreadsMakesThreads() {
    return noClasses()
        .that()
        .resideInAnyPackage(PIPELINE_CODE)
        .and()
        .doNotHaveFullyQualifiedName(PipelineThreads.class.getName())
        .should()
        .callConstructorWhere(A_THREAD)
        .because("a pipeline's threads carry its name in their logging context (PipelineThreads)");
  }

  @Test
  void onlyPipelineThreadsMakesAPipelinesThreads() {
    onlyPipelineThreadsMakesThreads().check(RELAY);
  }

  /** The rule can fail: a sink's class that makes a thread itself. */
  @Test
  void aPipelineClassThatMakesAThreadItselfFails() {
    JavaClasses offender = new ClassFileImporter().importClasses(MakesAThread.class);
    assertThatThrownBy(() -> onlyPipelineThreadsMakesThreads().check(offender))
        .hasMessageContaining(MakesAThread.class.getName());
  }
}
