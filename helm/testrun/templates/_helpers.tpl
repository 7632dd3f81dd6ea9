{{/*
What the code fixes about each component, so that it is not a value anyone could get wrong: the
registry of services, services.yaml beside this chart's values.yaml (its ports, the services it calls
(its <NAME>_URL variables), the secrets its config declares, whether it owns a database schema and so
runs `<name> migrate`, the paths the public host sends to it). scripts/system.ts, the tests and the
docs read the same file; test/chart.test.ts and test/registry.test.ts check it against the code.
Its order is the migration order and the order objects are rendered in.
*/}}
{{- define "testrun.registry" -}}
{{- $registry := fromYaml (.Files.Get "services.yaml") -}}
{{- if not $registry.services -}}
{{- fail "services.yaml (the registry of services) is missing from the chart or lists no services" -}}
{{- end -}}
{{- toYaml $registry.services -}}
{{- end -}}

{{/*
Each component's own Redis user (the registry's `redis` rules after its redisCommon), as a list
of {name, user, rules}: the in-chart Redis defines them (redis.yaml) and the generated Secret
holds their passwords and URLs (secret.yaml). scripts/services.ts reads the same rules for
`make run` and the tests.
*/}}
{{- define "testrun.redisUsers" -}}
{{- $registry := fromYaml (.Files.Get "services.yaml") -}}
{{- $common := splitList " " ($registry.redisCommon | default "") | compact -}}
{{- $users := list -}}
{{- range $service := $registry.services -}}
{{- if $service.redis -}}
{{- $rules := concat $common (splitList " " $service.redis | compact) -}}
{{- $users = append $users (dict "name" $service.name "user" (printf "testrun-%s" $service.name) "rules" $rules) -}}
{{- end -}}
{{- end -}}
{{- toYaml $users -}}
{{- end -}}

{{/*
The Secret key a component's secret variable comes from: the variable's name, but REDIS_URL,
which names the component's own Redis user: REDIS_URL_<NAME>. (dict "name" "keys" "variable" "REDIS_URL")
*/}}
{{- define "testrun.secretKey" -}}
{{- if eq .variable "REDIS_URL" -}}
{{- printf "REDIS_URL_%s" (upper .name) -}}
{{- else -}}
{{- .variable -}}
{{- end -}}
{{- end -}}

{{/* The registry as a map: name → facts. */}}
{{- define "testrun.catalogue" -}}
{{- $catalogue := dict -}}
{{- range $service := fromYamlArray (include "testrun.registry" .) -}}
{{- $_ := set $catalogue $service.name $service -}}
{{- end -}}
{{- toYaml $catalogue -}}
{{- end -}}

{{/* The components' names, in the registry's order. */}}
{{- define "testrun.componentNames" -}}
{{- $names := list -}}
{{- range $service := fromYamlArray (include "testrun.registry" .) -}}
{{- $names = append $names $service.name -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/* The catalogue entry of a component: (dict "root" $ "name" "keys") */}}
{{- define "testrun.facts" -}}
{{- $catalogue := fromYaml (include "testrun.catalogue" .root) -}}
{{- toYaml (index $catalogue .name) -}}
{{- end -}}

{{/* The components that call a component, from the catalogue's `calls`. */}}
{{- define "testrun.callers" -}}
{{- $catalogue := fromYaml (include "testrun.catalogue" .root) -}}
{{- $callers := list -}}
{{- range $name := fromYamlArray (include "testrun.componentNames" .root) -}}
{{- if has $.name ((index $catalogue $name).calls | default list) -}}
{{- $callers = append $callers $name -}}
{{- end -}}
{{- end -}}
{{- toYaml $callers -}}
{{- end -}}

{{/* The components whose config declares a secret (DATABASE_URL: PostgreSQL's users). */}}
{{- define "testrun.usersOf" -}}
{{- $catalogue := fromYaml (include "testrun.catalogue" .root) -}}
{{- $users := list -}}
{{- range $name := fromYamlArray (include "testrun.componentNames" .root) -}}
{{- if has $.secret ((index $catalogue $name).secrets | default list) -}}
{{- $users = append $users $name -}}
{{- end -}}
{{- end -}}
{{- toYaml $users -}}
{{- end -}}

{{/* "<release>-testrun", or the release name when it already says testrun. */}}
{{- define "testrun.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains "testrun" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-testrun" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Object name of a part: (dict "root" $ "name" "keys") */}}
{{- define "testrun.name" -}}
{{- printf "%s-%s" (include "testrun.fullname" .root) .name -}}
{{- end -}}

{{/*
base with over on top, as YAML: (dict "base" {...} "over" {...}). Maps are merged key by key,
recursively; any other value of over (a list, a string, a number, false, null) replaces base's
whole. How componentDefaults reaches each component, and a component each of its executor pools
(values.yaml says so beside componentDefaults, README.md "Components").
*/}}
{{- define "testrun.merge" -}}
{{- $result := deepCopy (.base | default dict) -}}
{{- range $key, $value := .over -}}
{{- $current := get $result $key -}}
{{- if and (kindIs "map" $value) (kindIs "map" $current) -}}
{{- $_ := set $result $key (fromYaml (include "testrun.merge" (dict "base" $current "over" $value))) -}}
{{- else -}}
{{- $_ := set $result $key $value -}}
{{- end -}}
{{- end -}}
{{- toYaml $result -}}
{{- end -}}

{{/*
A component's values, pools aside: componentDefaults under components.<name> (testrun.merge).
(dict "root" $ "name" "keys")
*/}}
{{- define "testrun.componentValues" -}}
{{- if not (hasKey .root.Values.components .name) -}}
{{- fail (include "testrun.missingComponent" .name) -}}
{{- end -}}
{{- $own := omit ((index .root.Values.components .name) | default dict) "pools" -}}
{{- include "testrun.merge" (dict "base" .root.Values.componentDefaults "over" $own) -}}
{{- end -}}

{{/*
The Deployments of a component, as a YAML list of {pool, values}: one (pool "") with the
component's values; for the executor, one per entry of components.executor.pools when it names
any, each with the pool's values over the executor's (testrun.merge; docs/scaling.md, "Executor
pools").
*/}}
{{- define "testrun.workloads" -}}
{{- $base := fromYaml (include "testrun.componentValues" .) -}}
{{- $pools := (index .root.Values.components .name | default dict).pools -}}
{{- $workloads := list -}}
{{- if $pools -}}
{{- range $pool, $overrides := $pools -}}
{{- $workloads = append $workloads (dict "pool" $pool "values" (fromYaml (include "testrun.merge" (dict "base" $base "over" $overrides)))) -}}
{{- end -}}
{{- else -}}
{{- $workloads = append $workloads (dict "pool" "" "values" $base) -}}
{{- end -}}
{{- toYaml $workloads -}}
{{- end -}}

{{/*
The values of one Deployment: its executor pool's when the context has them, else the component's
(componentDefaults merged in): (dict "root" $ "name" "executor" ["pool" "browser" "values" {...}]).
*/}}
{{- define "testrun.values" -}}
{{- if .values -}}
{{- toYaml .values -}}
{{- else -}}
{{- include "testrun.componentValues" . -}}
{{- end -}}
{{- end -}}

{{- define "testrun.missingComponent" -}}
components.{{ . }} is missing from the values: every service of services.yaml needs its entry (copy another component's in values.yaml)
{{- end -}}

{{/* The name of one Deployment (and its ConfigMap, HPA, PDB): the component's, -<pool> for a pool. */}}
{{- define "testrun.workloadName" -}}
{{- include "testrun.name" . -}}{{- with .pool -}}-{{ . }}{{- end -}}
{{- end -}}

{{/* The label that tells executor pools apart (in their selectors, so that no two Deployments overlap). */}}
{{- define "testrun.poolLabel" -}}
{{- with .pool -}}
testrun/executor-pool: {{ . }}
{{- end -}}
{{- end -}}

{{/* The selector of one Deployment's pods: the component's, and its pool's label. */}}
{{- define "testrun.workloadSelectorLabels" -}}
{{ include "testrun.selectorLabels" . }}
{{- with include "testrun.poolLabel" . }}
{{ . }}
{{- end -}}
{{- end -}}

{{/* The kinds a stepKinds value lists (kit's testKinds): "all" is every kind; a YAML list. */}}
{{- define "testrun.listedKinds" -}}
{{- $listed := . | default "all" -}}
{{- if eq $listed "all" -}}
{{- toYaml (list "http" "browser" "spec") -}}
{{- else -}}
{{- $kinds := list -}}
{{- range splitList "," $listed }}{{ $kinds = append $kinds (trim .) }}{{ end -}}
{{- toYaml $kinds -}}
{{- end -}}
{{- end -}}

{{/* "true" when some executor Deployment lists Playwright specs itself (stepKinds spec, or all). */}}
{{- define "testrun.specsListed" -}}
{{- range $workload := fromYamlArray (include "testrun.workloads" (dict "root" .root "name" "executor")) -}}
{{- if has "spec" (include "testrun.listedKinds" $workload.values.stepKinds | fromYamlArray) }}true{{ end -}}
{{- end -}}
{{- end -}}

{{/*
The kinds of test a Deployment's executors take (EXECUTOR_STEP_KINDS), a YAML list: its stepKinds;
executors that take browser tests take Playwright specs too, unless a pool lists specs itself
(docs/scaling.md, "Executor pools"). Empty for other components.
*/}}
{{- define "testrun.executorKinds" -}}
{{- if eq .name "executor" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $kinds := include "testrun.listedKinds" $values.stepKinds | fromYamlArray -}}
{{- if and (has "browser" $kinds) (not (has "spec" $kinds)) (not (include "testrun.specsListed" .)) -}}
{{- $kinds = append $kinds "spec" -}}
{{- end -}}
{{- toYaml $kinds -}}
{{- else -}}
{{- toYaml list -}}
{{- end -}}
{{- end -}}

{{/* Whether a Deployment's executors run chromium (browser tests, or specs' runners): "true" or "". */}}
{{- define "testrun.runsBrowsers" -}}
{{- $kinds := include "testrun.executorKinds" . | fromYamlArray -}}
{{- if or (has "browser" $kinds) (has "spec" $kinds) -}}true{{- end -}}
{{- end -}}

{{- define "testrun.selectorLabels" -}}
app.kubernetes.io/name: testrun
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "testrun.labels" -}}
{{ include "testrun.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: testrun
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "testrun.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The image of one Deployment: the browser image for executors that take browser tests. */}}
{{- define "testrun.workloadImage" -}}
{{- $image := .root.Values.image -}}
{{- if include "testrun.runsBrowsers" . -}}
{{- $tag := $image.tag | default .root.Chart.AppVersion -}}
{{- if $image.browserDigest -}}
{{- printf "%s:%s@%s" $image.browserRepository $tag $image.browserDigest -}}
{{- else -}}
{{- printf "%s:%s" $image.browserRepository $tag -}}
{{- end -}}
{{- else -}}
{{- include "testrun.image" .root -}}
{{- end -}}
{{- end -}}

{{/* The Secret the components read: the existingSecret, or the generated one. */}}
{{- define "testrun.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "testrun.fullname" .) -}}
{{- end -}}

{{/* The address of a component's gRPC port: http://<fullname>-<name>:<port> */}}
{{- define "testrun.serviceUrl" -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
{{- printf "http://%s:%d" (include "testrun.name" .) (int $facts.port) -}}
{{- end -}}

{{/* How many proxies that append to X-Forwarded-For the gateway and the console sit behind. */}}
{{- define "testrun.trustProxyHops" -}}
{{- if kindIs "invalid" .Values.config.trustProxyHops -}}
{{- if or .Values.ingress.enabled .Values.httpRoute.enabled -}}1{{- else -}}0{{- end -}}
{{- else -}}
{{- .Values.config.trustProxyHops | int -}}
{{- end -}}
{{- end -}}

{{/*
The one public origin people open (the console at /, the REST API at /v1): config.appUrl, else the
Ingress host, else the first HTTPRoute hostname; empty without any (the services' defaults then).
APP_URL of the runs service and the console, API_URL of the console and the gateway (the base of
artifact urls).
*/}}
{{- define "testrun.appUrl" -}}
{{- if .Values.config.appUrl -}}
{{- .Values.config.appUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host -}}
{{- else if and .Values.httpRoute.enabled .Values.httpRoute.hostnames -}}
{{- printf "https://%s" (first .Values.httpRoute.hostnames) -}}
{{- end -}}
{{- end -}}

{{/* Milliseconds from SIGTERM until the process has exited, at most. */}}
{{- define "testrun.shutdownMs" -}}
{{- $shutdown := .shutdown -}}
{{- add (int $shutdown.drainMs) (int $shutdown.timeoutMs) -}}
{{- end -}}

{{/*
Every variable the chart derives from its values for some component, as a YAML map for one
Deployment's context: (dict "root" $ "name" "runs" ["values" {...}]). null: the values leave it
unset (the service's default then applies). Which component gets which is the registry's `env`
(services.yaml), not this table; a variable the registry names and this table lacks is refused.
*/}}
{{- define "testrun.settings" -}}
{{- $root := .root -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $appUrl := include "testrun.appUrl" $root -}}
{{- $http := $root.Values.config.http -}}
{{- $artifacts := $root.Values.artifacts -}}
{{- $s3 := eq $artifacts.store "s3" -}}
{{- $console := $root.Values.console -}}
{{- $oidc := not (empty $console.oidc.issuerUrl) -}}
{{- $egress := $root.Values.egress -}}
{{- $contexts := dig "browser" "contexts" 0 $values -}}
{{- toYaml (dict
  "TRUST_PROXY_HOPS" (include "testrun.trustProxyHops" $root)
  "HTTP_MAX_CONNECTIONS" (toString (int $http.maxConnections))
  "HTTP_HEADERS_TIMEOUT_SECONDS" (toString (int $http.headersTimeoutSeconds))
  "HTTP_BODY_TIMEOUT_SECONDS" (toString (int $http.bodyTimeoutSeconds))
  "HTTP_IDLE_TIMEOUT_SECONDS" (toString (int $http.idleTimeoutSeconds))
  "APP_URL" ($appUrl | default nil)
  "API_URL" ($appUrl | default nil)
  "LEASE_MS" (toString (int $root.Values.config.leaseMs))
  "MAX_RUNNING_PER_PROJECT" (toString (int $values.maxRunningPerProject))
  "ARTIFACT_STORE" $artifacts.store
  "ARTIFACT_RETENTION_DAYS" (toString (int $artifacts.retentionDays))
  "ARTIFACT_S3_BUCKET" (ternary $artifacts.s3.bucket nil $s3)
  "ARTIFACT_S3_PREFIX" (ternary $artifacts.s3.prefix nil $s3)
  "ARTIFACT_S3_REGION" (ternary $artifacts.s3.region nil $s3)
  "ARTIFACT_S3_FORCE_PATH_STYLE" (ternary (toString $artifacts.s3.forcePathStyle) nil $s3)
  "ARTIFACT_S3_ENDPOINT" (ternary ($artifacts.s3.endpoint | default nil) nil $s3)
  "NEW_PROJECT_CREDITS" (toString (int $root.Values.credits.newProject))
  "NEW_PROJECT_GRANTS_PER_ORGANIZATION" (toString (int $root.Values.credits.newProjectGrantsPerOrganization))
  "OPERATOR_CONTACT" (trim $root.Values.credits.operatorContact | default nil)
  "SESSION_IDLE_MINUTES" (toString (int $console.sessionIdleMinutes))
  "SESSION_MAX_HOURS" (toString (int $console.sessionMaxHours))
  "OIDC_ISSUER_URL" (ternary $console.oidc.issuerUrl nil $oidc)
  "OIDC_CLIENT_ID" (ternary $console.oidc.clientId nil $oidc)
  "CONCURRENCY" (toString (int $values.concurrency))
  "EXECUTOR_STEP_KINDS" (ternary "all" (join "," (include "testrun.executorKinds" . | fromYamlArray)) (eq ($values.stepKinds | default "all") "all"))
  "BROWSER_CONTEXTS" (ternary (toString (int $contexts)) nil (not (empty (include "testrun.runsBrowsers" .))))
  "BROWSER_PROCESSES" (ternary (toString (int (dig "browser" "processes" 0 $values))) nil (and (not (empty (include "testrun.runsBrowsers" .))) (not (empty (dig "browser" "processes" nil $values)))))
  "BROWSER_SANDBOX" (ternary (ternary "on" "off" (include "testrun.browserSandbox" . | eq "true")) nil (not (empty (include "testrun.runsBrowsers" .))))
  "EGRESS_DENY_CIDRS" (join "," (include "testrun.deniedCidrs" $root | fromYamlArray))
  "EGRESS_ALLOW_CIDRS" (join "," $egress.allowCidrs)
  "EGRESS_CLUSTER_DOMAIN" $egress.clusterDomain
  "EGRESS_ALLOW_CLUSTER_NAMES" (toString $egress.allowClusterNames)
) -}}
{{- end -}}

{{/*
The non-secret environment of a component (its ConfigMap, and the migration Job's containers):
(dict "root" $ "name" "keys"). A YAML map of strings: what every component gets, the variables
its registry entry's `env` names (testrun.settings), then config.env and the component's env.
*/}}
{{- define "testrun.config" -}}
{{- $root := .root -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
{{- $env := dict
  "LOG_LEVEL" $root.Values.config.logLevel
  "PORT" (toString $facts.port)
  "METRICS_PORT" (toString $facts.metricsPort)
  "SHUTDOWN_DRAIN_MS" (toString (int $values.shutdown.drainMs))
  "SHUTDOWN_TIMEOUT_MS" (toString (int $values.shutdown.timeoutMs))
-}}
{{- if $facts.httpPort -}}
{{- $_ := set $env "HTTP_PORT" (toString $facts.httpPort) -}}
{{- end -}}
{{- range $callee := $facts.calls -}}
{{- $_ := set $env (printf "%s_URL" (upper $callee)) (include "testrun.serviceUrl" (dict "root" $root "name" $callee)) -}}
{{- end -}}
{{- with $root.Values.config.nodeOptions -}}
{{- $_ := set $env "NODE_OPTIONS" . -}}
{{- end -}}
{{- with $root.Values.config.otel.endpoint -}}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" . -}}
{{- end -}}
{{- with $root.Values.config.otel.resourceAttributes -}}
{{- $_ := set $env "OTEL_RESOURCE_ATTRIBUTES" . -}}
{{- end -}}
{{- $_ := set $env "RPC_MAX_CONNECTIONS" (toString (int $root.Values.config.rpc.maxConnections)) -}}
{{- $_ := set $env "RPC_IDLE_TIMEOUT_SECONDS" (toString (int $root.Values.config.rpc.idleTimeoutSeconds)) -}}
{{- $settings := fromYaml (include "testrun.settings" .) -}}
{{- range $variable := $facts.env | default list -}}
{{- if not (hasKey $settings $variable) -}}
{{- fail (printf "services.yaml gives %s the variable %s, which templates/_helpers.tpl (testrun.settings) does not know how to set from the values" $.name $variable) -}}
{{- end -}}
{{- $value := get $settings $variable -}}
{{- if not (kindIs "invalid" $value) -}}
{{- $_ := set $env $variable (toString $value) -}}
{{- end -}}
{{- end -}}
{{- range $key, $value := $root.Values.config.env -}}
{{- $_ := set $env $key (toString $value) -}}
{{- end -}}
{{- range $key, $value := $values.env -}}
{{- $_ := set $env $key (toString $value) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/*
env entries taking each secret the component's config declares from the Secret, key by key; and its
optional secrets (the registry's optionalSecrets) from where the values say, when configured.
*/}}
{{- define "testrun.secretEnv" -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
{{- range $key := $facts.secrets }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "testrun.secretName" $.root }}
      key: {{ include "testrun.secretKey" (dict "name" $.name "variable" $key) }}
{{- end }}
{{- range $key := $facts.optionalSecrets | default list }}
{{- with include "testrun.optionalSecretName" (dict "root" $.root "key" $key) }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The Secret an optional secret comes from, empty when its feature is off: (dict "root" $ "key" "OIDC_CLIENT_SECRET") */}}
{{- define "testrun.optionalSecretName" -}}
{{- if eq .key "OIDC_CLIENT_SECRET" -}}
{{- if .root.Values.console.oidc.issuerUrl -}}{{- .root.Values.console.oidc.existingSecret -}}{{- end -}}
{{- else if has .key (list "ARTIFACT_S3_ACCESS_KEY_ID" "ARTIFACT_S3_SECRET_ACCESS_KEY") -}}
{{- if eq .root.Values.artifacts.store "s3" -}}{{- .root.Values.artifacts.s3.existingSecret -}}{{- end -}}
{{- else -}}
{{- fail (printf "services.yaml names the optional secret %s, which templates/_helpers.tpl (testrun.optionalSecretName) does not know where to take from" .key) -}}
{{- end -}}
{{- end -}}

{{/* The container security context (values.containerSecurityContext). */}}
{{- define "testrun.containerSecurityContext" -}}
{{- toYaml .Values.containerSecurityContext -}}
{{- end -}}

{{/*
A workload's container security context: values.containerSecurityContext, with the seccomp profile
of browser.seccompProfile for executors that run chromium with its sandbox (it needs user
namespaces, which the runtime's default profile refuses: docs/deploy.md). Takes the workload's dict.
*/}}
{{- define "testrun.workloadSecurityContext" -}}
{{- $context := deepCopy .root.Values.containerSecurityContext -}}
{{- if and (include "testrun.runsBrowsers" .) (eq (include "testrun.browserSandbox" .) "true") -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $_ := set $context "seccompProfile" (dig "browser" "seccompProfile" (dict "type" "Unconfined") $values) -}}
{{- end -}}
{{- if eq (include "testrun.specSandbox" .) "true" -}}
{{- /* The user-code sandbox (docs/security.md, "User code"): root, and only the capabilities it
uses: namespaces and mounts (SYS_ADMIN), the loopback of its network namespace (NET_ADMIN), the
sandbox's own uid and empty bounding set (SETUID, SETGID, SETPCAP), its folder given to that uid and
copied back (CHOWN, DAC_OVERRIDE, FOWNER), and its processes killed (KILL). Privilege escalation
allowed: its shells regain their capabilities in the user namespace it makes by an exec once its ids
are mapped, which no_new_privs forbids (the API server would take SYS_ADMIN without it); the
runtime's AppArmor profile refuses mounts. */ -}}
{{- $_ := set $context "runAsNonRoot" false -}}
{{- $_ := set $context "runAsUser" 0 -}}
{{- $_ := set $context "runAsGroup" 0 -}}
{{- $_ := set $context "allowPrivilegeEscalation" true -}}
{{- $_ := set $context "capabilities" (dict "drop" (list "ALL") "add" (list "SYS_ADMIN" "NET_ADMIN" "SETUID" "SETGID" "SETPCAP" "CHOWN" "DAC_OVERRIDE" "FOWNER" "KILL")) -}}
{{- if include "testrun.appArmorField" .root -}}
{{- $_ := set $context "appArmorProfile" (dict "type" "Unconfined") -}}
{{- end -}}
{{- end -}}
{{- toYaml $context -}}
{{- end -}}

{{/* "true" when the cluster knows securityContext.appArmorProfile (Kubernetes 1.30+); else the pod annotation says it. */}}
{{- define "testrun.appArmorField" -}}
{{- if semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version }}true{{ end -}}
{{- end -}}

{{/* "true" when the workload's executors make the user-code sandbox for Playwright specs (specs.sandbox). */}}
{{- define "testrun.specSandbox" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $sandbox := dig "specs" "sandbox" false $values -}}
{{- if kindIs "bool" $sandbox }}{{ $sandbox }}{{ else }}false{{ end -}}
{{- end -}}

{{/* "true" when the workload's chromium runs with its sandbox (browser.sandbox, false by default). */}}
{{- define "testrun.browserSandbox" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $sandbox := dig "browser" "sandbox" false $values -}}
{{- if kindIs "bool" $sandbox }}{{ $sandbox }}{{ else }}false{{ end -}}
{{- end -}}

{{- define "testrun.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{/* /tmp is the only place a process may write: the root file system is read-only. */}}
{{- define "testrun.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .tmpSizeLimit | default "64Mi" }}
{{- end -}}

{{/*
chromium's shared memory: /dev/shm as an emptyDir of medium Memory (a container's own /dev/shm is
64 MiB, too little for a browser). What it holds counts against the container's memory limit.
*/}}
{{- define "testrun.shmVolume" -}}
- name: shm
  emptyDir:
    medium: Memory
    sizeLimit: {{ .sizeLimit }}
{{- end -}}

{{- define "testrun.shmMount" -}}
- name: shm
  mountPath: /dev/shm
{{- end -}}

{{- define "testrun.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The ranges executors and webhooks refuse on top of their built-in blocks (EGRESS_DENY_CIDRS),
  and the executors' NetworkPolicy leaves out: the cluster's pods, Services and nodes, and denyCidrs. */}}
{{- define "testrun.deniedCidrs" -}}
{{- $egress := .Values.egress -}}
{{- toYaml (concat $egress.podCidrs $egress.serviceCidrs $egress.nodeCidrs $egress.denyCidrs) -}}
{{- end -}}

{{/* Refuses values that cannot work, with a message saying what to do. */}}
{{- define "testrun.validate" -}}
{{- $egress := .Values.egress -}}
{{- if not $egress.allowClusterRanges -}}
{{- $missing := list -}}
{{- range $key := list "podCidrs" "serviceCidrs" "nodeCidrs" -}}
{{- if not (index $egress $key) -}}{{- $missing = append $missing (printf "egress.%s" $key) -}}{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "the cluster's pod, Service and node ranges are required (missing: %s): executors and webhook deliveries refuse them, so that a test or a webhook cannot reach the cluster's own pods (databases, metrics), Services and kubelets. On kind: --set 'egress.podCidrs={10.244.0.0/16}' --set 'egress.serviceCidrs={10.96.0.0/12}' --set 'egress.nodeCidrs={172.18.0.0/16}' (yours: kube-controller-manager's --cluster-cidr, or the range holding `kubectl get nodes -o jsonpath='{.items[*].spec.podCIDRs}'`; kube-apiserver's --service-cluster-ip-range, or `kubectl get servicecidr kubernetes -o jsonpath='{.spec.cidrs}'` on Kubernetes 1.33+; the subnet of the nodes' InternalIP in `kubectl get nodes -o wide`). To install without them, letting tests and webhooks reach the cluster (a throwaway cluster), set egress.allowClusterRanges=true. See docs/deploy.md, Executors' egress" (join ", " $missing)) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.secrets.existingSecret) (not (and .Values.postgresql.enabled .Values.redis.enabled)) -}}
{{- fail "secrets.existingSecret is required unless postgresql.enabled and redis.enabled are both true: the chart can only generate the connection URLs of its own PostgreSQL and Redis (see docs/deploy.md, Secrets)" -}}
{{- end -}}
{{- with .Values.secrets.existingSecret -}}
{{- /* Checked when the cluster can be asked (install, upgrade; not `helm template`): a missing key
  would otherwise surface as pods stuck in CreateContainerConfigError until the timeout. */ -}}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace . -}}
{{- if $secret -}}
{{- $needed := list -}}
{{- range $name, $facts := fromYaml (include "testrun.catalogue" $) -}}
{{- range $variable := $facts.secrets -}}
{{- $needed = append $needed (include "testrun.secretKey" (dict "name" $name "variable" $variable)) -}}
{{- end -}}
{{- end -}}
{{- if $.Values.postgresql.enabled -}}{{- $needed = append $needed "POSTGRES_PASSWORD" -}}{{- end -}}
{{- if $.Values.redis.enabled -}}
{{- $needed = append $needed "REDIS_PASSWORD" -}}
{{- range $user := fromYamlArray (include "testrun.redisUsers" $) -}}
{{- $needed = append $needed (printf "REDIS_PASSWORD_%s" (upper $user.name)) -}}
{{- end -}}
{{- end -}}
{{- $missing := list -}}
{{- range $key := $needed | uniq | sortAlpha -}}
{{- if not (hasKey ($secret.data | default dict) $key) -}}
{{- $missing = append $missing $key -}}
{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "secrets.existingSecret %q has no key %s (see docs/deploy.md, Secrets)" . (join ", " $missing)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $oidc := .Values.console.oidc -}}
{{- if and (or $oidc.issuerUrl $oidc.clientId $oidc.existingSecret) (not (and $oidc.issuerUrl $oidc.clientId $oidc.existingSecret)) -}}
{{- fail "console.oidc: set issuerUrl, clientId and existingSecret (a Secret with the key OIDC_CLIENT_SECRET) together for OpenID Connect sign-in, or none of them (sign-in links only; see docs/console.md)" -}}
{{- end -}}
{{- with $oidc.existingSecret -}}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace . -}}
{{- if and $secret (not (hasKey ($secret.data | default dict) "OIDC_CLIENT_SECRET")) -}}
{{- fail (printf "console.oidc.existingSecret %q has no key OIDC_CLIENT_SECRET" .) -}}
{{- end -}}
{{- end -}}
{{- if and (eq .Values.artifacts.store "s3") (not .Values.artifacts.s3.bucket) -}}
{{- fail "artifacts.s3.bucket is required when artifacts.store is s3 (see docs/runs.md, Artifacts)" -}}
{{- end -}}
{{- with .Values.artifacts.s3.existingSecret -}}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace . -}}
{{- range $key := list "ARTIFACT_S3_ACCESS_KEY_ID" "ARTIFACT_S3_SECRET_ACCESS_KEY" -}}
{{- if and $secret (not (hasKey ($secret.data | default dict) $key)) -}}
{{- fail (printf "artifacts.s3.existingSecret %q has no key %s" $.Values.artifacts.s3.existingSecret $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) -}}
{{- fail "ingress.host is required when ingress.enabled is true" -}}
{{- end -}}
{{- if and .Values.ingress.enabled .Values.ingress.tls.enabled (not .Values.ingress.tls.secretName) -}}
{{- fail "ingress.tls.secretName is required when ingress.tls.enabled is true" -}}
{{- end -}}
{{- if and .Values.httpRoute.enabled (not .Values.httpRoute.parentRefs) -}}
{{- fail "httpRoute.parentRefs is required when httpRoute.enabled is true" -}}
{{- end -}}
{{- $names := fromYamlArray (include "testrun.componentNames" .) -}}
{{- range $name, $_ := .Values.components -}}
{{- if not (has $name $names) -}}
{{- fail (printf "components.%s: no such service in services.yaml (the services: %s)" $name (join ", " $names)) -}}
{{- end -}}
{{- end -}}
{{- range $name := $names -}}
{{- if not (hasKey $.Values.components $name) -}}
{{- fail (include "testrun.missingComponent" $name) -}}
{{- end -}}
{{- range $workload := fromYamlArray (include "testrun.workloads" (dict "root" $ "name" $name)) -}}
{{- $a := $workload.values.autoscaling -}}
{{- if and (include "testrun.autoscaled" (dict "root" $ "name" $name "pool" $workload.pool "values" $workload.values)) (gt (int $a.minReplicas) (int $a.maxReplicas)) -}}
{{- fail (printf "components.%s%s.autoscaling.minReplicas is above maxReplicas" $name (ternary (printf ".pools.%s" $workload.pool) "" (ne $workload.pool ""))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.autoscaling.keda.enabled (not .Values.autoscaling.keda.serverAddress) -}}
{{- fail "autoscaling.keda.serverAddress is required when autoscaling.keda.enabled is true: the Prometheus KEDA asks for the tests waiting (see docs/scaling.md)" -}}
{{- end -}}
{{- /* Every kind of test needs executors that take it, or its tests wait until the dispatch deadline. */ -}}
{{- $kinds := list -}}
{{- range $workload := fromYamlArray (include "testrun.workloads" (dict "root" . "name" "executor")) -}}
{{- $workload := merge (dict "root" $ "name" "executor") $workload -}}
{{- $taken := include "testrun.executorKinds" $workload | fromYamlArray -}}
{{- $kinds = concat $kinds $taken -}}
{{- if and (eq (include "testrun.specSandbox" $workload) "true") (eq (include "testrun.browserSandbox" $workload) "true") -}}
{{- fail (printf "components.executor%s: specs.sandbox and browser.sandbox on one pool would run hostile specs with the container's seccomp profile Unconfined (chromium's sandbox needs it): give specs a pool of their own (docs/deploy.md, Playwright specs)" (ternary (printf ".pools.%s" $workload.pool) "" (ne $workload.pool ""))) -}}
{{- end -}}
{{- if and (eq (include "testrun.specSandbox" $workload) "true") (not (has "spec" $taken)) -}}
{{- fail (printf "components.executor%s.specs.sandbox is for executors that take Playwright specs (stepKinds spec, browser,spec or all)" (ternary (printf ".pools.%s" $workload.pool) "" (ne $workload.pool ""))) -}}
{{- end -}}
{{- end -}}
{{- range $kind := include "testrun.listedKinds" "all" | fromYamlArray -}}
{{- if not (has $kind $kinds) -}}
{{- fail (printf "components.executor.pools: no pool takes %s tests (give one stepKinds %s or all), so they would wait until the dispatch deadline and be skipped (see docs/scaling.md, Executor pools)" $kind $kind) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Whether an autoscaler sets a Deployment's replicas: a CPU HPA, or KEDA's for executors. */}}
{{- define "testrun.autoscaled" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- if or (and .root.Values.autoscaling.enabled $values.autoscaling.enabled) (include "testrun.kedaScaled" .) -}}true{{- end -}}
{{- end -}}

{{/* The fewest replicas a component runs: its replicas, or its HPA's minimum. */}}
{{- define "testrun.minReplicas" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- if include "testrun.autoscaled" . -}}
{{- int $values.autoscaling.minReplicas -}}
{{- else -}}
{{- int $values.replicas -}}
{{- end -}}
{{- end -}}

{{/* Spreads the pods of one part over nodes and zones: (dict "root" $ "name" "keys") */}}
{{- define "testrun.topologySpread" -}}
{{- if .root.Values.topologySpread.enabled }}
{{- range $key := .root.Values.topologySpread.topologyKeys }}
- maxSkew: {{ int $.root.Values.topologySpread.maxSkew }}
  topologyKey: {{ $key }}
  whenUnsatisfiable: {{ $.root.Values.topologySpread.whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- include "testrun.workloadSelectorLabels" $ | nindent 6 }}
  # Counts only the pods of the same revision, so a rolling update is spread too.
  matchLabelKeys: [pod-template-hash]
{{- end }}
{{- end }}
{{- end -}}
