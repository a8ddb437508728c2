package io.outbox.soak;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.outbox.soak.InvariantChecker.Findings;
import io.outbox.soak.InvariantChecker.Violation;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a soak did and found, printed as text or JSON: events committed and delivered, the faults in
 * order with what followed each (take-over, duplicates against their bound), and every broken
 * invariant with its event ids.
 */
record SoakReport(
    SoakOptions options,
    Instant started,
    Instant ended,
    Path directory,
    Workload.Counts writers,
    int delayed,
    int flaky,
    int refusalWindows,
    Duration drained,
    List<FaultRecord> faults,
    Findings findings,
    List<Violation> violations,
    int duplicateBound) {

  private static final int LISTED_PER_INVARIANT = 20;
  private static final DateTimeFormatter CLOCK =
      DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

  static SoakReport of(
      SoakOptions options,
      Instant started,
      Instant ended,
      Path directory,
      Workload.Counts writers,
      List<WrittenEvent> written,
      int refusalWindows,
      Duration drained,
      List<FaultRecord> faults,
      Findings findings,
      List<Violation> violations,
      int duplicateBound) {
    List<WrittenEvent> committed =
        written.stream().filter(w -> w.outcome() == WrittenEvent.Outcome.COMMITTED).toList();
    return new SoakReport(
        options,
        started,
        ended,
        directory,
        writers,
        (int) committed.stream().filter(WrittenEvent::delayed).count(),
        (int) committed.stream().filter(WrittenEvent::flaky).count(),
        refusalWindows,
        drained,
        List.copyOf(faults),
        findings,
        List.copyOf(violations),
        duplicateBound);
  }

  boolean passed() {
    return violations.isEmpty();
  }

  Map<FaultKind, Long> faultsByKind() {
    Map<FaultKind, Long> counts = new EnumMap<>(FaultKind.class);
    faults.forEach(f -> counts.merge(f.kind(), 1L, Long::sum));
    return counts;
  }

  /** Per fault kind, the times until a relay was active again (sorted), where one was. */
  Map<FaultKind, List<Duration>> activeAgainByKind() {
    Map<FaultKind, List<Duration>> out = new EnumMap<>(FaultKind.class);
    for (FaultRecord f : faults) {
      if (f.activeAgain() != null) {
        out.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(f.activeAgain());
      }
    }
    out.values().forEach(l -> l.sort(Duration::compareTo));
    return out;
  }

  String text() {
    StringBuilder sb = new StringBuilder();
    Findings f = findings;
    line(
        sb,
        "outbox-relay soak: %s: %s",
        options.describe(),
        passed()
            ? "PASSED, no invariant broken"
            : "FAILED, " + violations.size() + " violation(s)");
    line(sb, "  run        %s to %s; relay logs in %s", started, ended, directory);
    line(
        sb,
        "  writers    %d transactions committed (%d long), %d rolled back, %d writer errors",
        writers.commits(),
        writers.longTransactions(),
        writers.rollbacks(),
        writers.writerErrors());
    line(
        sb,
        "  events     %d committed (%d delayed, %d to the refusing destination), %d rolled back,"
            + " %d in doubt",
        f.committed(),
        delayed,
        flaky,
        f.rolledBack(),
        f.inDoubt());
    line(
        sb,
        "  delivered  %d distinct events in %d messages: %d duplicates (%d of them late re-sends,"
            + " behind a newer event of their key); backlog drained %d s after the last fault",
        f.delivered(),
        f.messages(),
        f.duplicateCount(),
        f.lateResends(),
        drained.toSeconds());
    line(
        sb,
        "  refusals   %d windows; %d events charged attempts (max attempts on a row %d)",
        refusalWindows,
        f.refusedRetryably(),
        f.maxAttempts());
    line(
        sb,
        "  faults     %d: %s",
        faults.size(),
        faultsByKind().entrySet().stream()
            .map(e -> e.getKey().label() + " " + e.getValue())
            .collect(Collectors.joining(", ")));
    activeAgainByKind()
        .forEach(
            (kind, times) ->
                line(
                    sb,
                    "  active again after %s: %d times, min %.1f s, median %.1f s, max %.1f s",
                    kind.label(),
                    times.size(),
                    seconds(times.get(0)),
                    seconds(times.get(times.size() / 2)),
                    seconds(times.get(times.size() - 1))));
    if (f.sentTwice() >= 0) {
      line(
          sb,
          "  exactly once: %d duplicates of events the relays listed as sent twice (a batch the"
              + " broker committed in part, a distrusted ledger record); any other duplicate is a"
              + " violation",
          f.sentTwice());
    } else {
      line(
          sb, "  duplicate bound per fault: %d (2 x lanes x batch-size in flight)", duplicateBound);
    }
    Map<String, Integer> dups = duplicatesByFault();
    int before = dups.getOrDefault(InvariantChecker.BEFORE_FAULTS, 0);
    if (before > 0) {
      line(sb, "  %d duplicates before the first fault (bound 0)", before);
    }
    sb.append("  faults in order:\n");
    for (FaultRecord fault : faults) {
      line(
          sb,
          "    %-4s %s  %-34s %-40s %-22s dup %d",
          "#" + fault.number(),
          CLOCK.format(fault.start()),
          fault.kind().label() + " " + fault.target(),
          fault.detail(),
          fault.activeAgain() == null
              ? "no hand-over"
              : String.format("active again %.1f s", seconds(fault.activeAgain())),
          dups.getOrDefault(fault.label(), 0));
    }
    if (violations.isEmpty()) {
      sb.append("  violations: none\n");
    } else {
      line(sb, "  violations (%d):", violations.size());
      if (!findings.lostSummary().isEmpty()) {
        line(sb, "    %s", findings.lostSummary());
      }
      Map<String, List<Violation>> byInvariant =
          violations.stream()
              .collect(
                  Collectors.groupingBy(
                      Violation::invariant, LinkedHashMap::new, Collectors.toList()));
      byInvariant.forEach(
          (invariant, list) -> {
            line(sb, "    %s: %d", invariant, list.size());
            list.stream()
                .limit(LISTED_PER_INVARIANT)
                .forEach(v -> line(sb, "      %s", v.detail()));
            if (list.size() > LISTED_PER_INVARIANT) {
              line(
                  sb,
                  "      ... and %d more (--json lists all)",
                  list.size() - LISTED_PER_INVARIANT);
            }
          });
    }
    return sb.toString();
  }

  /**
   * Per fault label (and {@link InvariantChecker#BEFORE_FAULTS}), the duplicates charged to it; a
   * fault missing here had none.
   */
  private Map<String, Integer> duplicatesByFault() {
    Map<String, Integer> out = new LinkedHashMap<>();
    findings.duplicates().forEach(d -> out.put(d.fault(), d.duplicates()));
    return out;
  }

  String json() {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = mapper.createObjectNode();
    root.put("passed", passed());
    root.put("duration_seconds", options.duration().toSeconds());
    root.put("source", options.source().type());
    root.put("sink", options.sink().type());
    root.put("seed", options.seed());
    root.put("started", started.toString());
    root.put("ended", ended.toString());
    root.put("directory", directory.toString());
    ObjectNode events = root.putObject("events");
    events.put("committed", findings.committed());
    events.put("rolled_back", findings.rolledBack());
    events.put("in_doubt", findings.inDoubt());
    events.put("delayed", delayed);
    events.put("refusing_destination", flaky);
    events.put("delivered", findings.delivered());
    events.put("messages", findings.messages());
    events.put("duplicates", findings.duplicateCount());
    events.put("late_resends", findings.lateResends());
    events.put("refused_retryably", findings.refusedRetryably());
    events.put("max_attempts", findings.maxAttempts());
    ObjectNode w = root.putObject("writers");
    w.put("commits", writers.commits());
    w.put("rollbacks", writers.rollbacks());
    w.put("long_transactions", writers.longTransactions());
    w.put("errors", writers.writerErrors());
    root.put("refusal_windows", refusalWindows);
    root.put("drained_seconds", drained.toSeconds());
    root.put("duplicate_bound", duplicateBound);
    if (findings.sentTwice() >= 0) {
      root.put("duplicates_listed_sent_twice", findings.sentTwice());
    }
    ObjectNode kinds = root.putObject("faults_by_kind");
    faultsByKind().forEach((k, n) -> kinds.put(k.label(), n));
    Map<String, Integer> dups = duplicatesByFault();
    ArrayNode list = root.putArray("faults");
    for (FaultRecord fault : faults) {
      ObjectNode n = list.addObject();
      n.put("number", fault.number());
      n.put("kind", fault.kind().label());
      n.put("target", fault.target());
      n.put("start", fault.start().toString());
      n.put("end", fault.end().toString());
      n.put("detail", fault.detail());
      if (fault.activeAgain() != null) {
        n.put("active_again_ms", fault.activeAgain().toMillis());
      } else {
        n.putNull("active_again_ms");
      }
      n.put("duplicates", dups.getOrDefault(fault.label(), 0));
    }
    root.put("duplicates_before_faults", dups.getOrDefault(InvariantChecker.BEFORE_FAULTS, 0));
    root.put("lost_summary", findings.lostSummary());
    ArrayNode v = root.putArray("violations");
    for (Violation violation : violations) {
      v.addObject().put("invariant", violation.invariant()).put("detail", violation.detail());
    }
    try {
      return mapper.writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the soak report as JSON", e);
    }
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static void line(StringBuilder sb, String format, Object... args) {
    sb.append(String.format(java.util.Locale.ROOT, format, args)).append('\n');
  }
}
