<#-- The archive's NOTICE (license-maven-plugin, goal add-third-party, in dist/pom.xml). -->
outbox-relay
Copyright 2026 the outbox-relay authors

This product is licensed under the Apache License, Version 2.0 (the file LICENSE beside this one).

This distribution bundles, in lib/, the following ${dependencyMap?size} third-party libraries, each
under its own license (group:artifact version: license). A library's own license and notice
files, where it has them, are inside its jar (META-INF/). Generated at build time from the
dependency tree; the SBOM published beside the archive lists the same components.

<#list dependencyMap?sort_by(["key", "artifactId"])?sort_by(["key", "groupId"]) as e>
<#assign p = e.getKey()/>
${p.groupId}:${p.artifactId} ${p.version}: <#list e.getValue() as license>${license}<#sep>; </#sep></#list>
</#list>
