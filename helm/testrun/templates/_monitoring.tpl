{{/*
Monitoring and KEDA helpers (templates/monitoring.yaml, templates/components.yaml). The metrics are the
contract of docs/operations.md, "Metrics"; every query selects this release's series by namespace and
scrape job, which is <fullname>-<component> for every component: the ServiceMonitor's job is the
Service's name, and the PodMonitor sets the same for executors.
*/}}

{{/* The labels of a monitoring object: the chart's and monitoring.labels. (dict "root" $ "name" "x") */}}
{{- define "testrun.monitoring.labels" -}}
{{ include "testrun.labels" . }}
{{- with .root.Values.monitoring.labels }}
{{ toYaml . }}
{{- end -}}
{{- end -}}

{{/* The scrape job of a component's pods: (dict "root" $ "name" "runs") */}}
{{- define "testrun.monitoring.job" -}}
{{- include "testrun.name" . -}}
{{- end -}}

{{/* The PromQL label matchers of every series of this release. */}}
{{- define "testrun.monitoring.selector" -}}
namespace="{{ .Release.Namespace }}",job=~"{{ include "testrun.fullname" . | regexQuoteMeta }}-({{ join "|" (fromYamlArray (include "testrun.componentNames" .)) }})"
{{- end -}}

{{/* The components the ServiceMonitor scrapes: all but the executor while the PodMonitor scrapes it. */}}
{{- define "testrun.monitoring.serviceMonitorComponents" -}}
{{- $names := list -}}
{{- range $name := fromYamlArray (include "testrun.componentNames" .) -}}
{{- if not (and (eq $name "executor") $.Values.monitoring.podMonitor.enabled) -}}
{{- $names = append $names $name -}}
{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/*
Relabelings of both monitors: an executor's pool (the pod label testrun/executor-pool) becomes the
label executor_pool, which the ScaledObjects' queries and the dashboard select on.
*/}}
{{- define "testrun.monitoring.relabelings" -}}
- sourceLabels: [__meta_kubernetes_pod_label_testrun_executor_pool]
  targetLabel: executor_pool
{{- end -}}

{{/* The runbook of an alert: (dict "root" $ "alert" "TestrunComponentDown") */}}
{{- define "testrun.monitoring.runbook" -}}
{{- printf "%s#%s" .root.Values.monitoring.prometheusRule.runbookBaseUrl (lower .alert) -}}
{{- end -}}

{{/* Whether KEDA scales a Deployment (an executor's, with autoscaling.enabled): "true" or "". */}}
{{- define "testrun.kedaScaled" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- if and (eq .name "executor") .root.Values.autoscaling.keda.enabled $values.autoscaling.enabled -}}true{{- end -}}
{{- end -}}

{{/*
A ScaledObject for one executor Deployment: replicas = ceil(work ÷ testsPerReplica), the work being
the tests waiting for the kinds it takes (testrun_tests_waiting, from PostgreSQL, the same in every
runs replica: max) plus those its pods are running (busy slots). Waiting alone would fall to zero as
soon as the executors keep up and scale them away under full load (docs/scaling.md).
*/}}
{{- define "testrun.component.scaledObject" -}}
{{- $root := .root -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $scaling := $values.autoscaling -}}
{{- $keda := $root.Values.autoscaling.keda -}}
{{- $kinds := include "testrun.executorKinds" . | fromYamlArray -}}
{{- $pools := join "|" $kinds -}}
{{- $perReplica := int $values.concurrency -}}
{{- if and (has "browser" $kinds) (not (has "http" $kinds)) (lt (int $values.browser.contexts) $perReplica) -}}
{{- $perReplica = int $values.browser.contexts -}}
{{- end -}}
{{- if not (kindIs "invalid" $keda.testsPerReplica) -}}
{{- $perReplica = int $keda.testsPerReplica -}}
{{- end -}}
{{- $ns := $root.Release.Namespace -}}
{{- $runs := include "testrun.monitoring.job" (dict "root" $root "name" "runs") -}}
{{- $executors := include "testrun.monitoring.job" (dict "root" $root "name" "executor") -}}
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ include "testrun.workloadName" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
    {{- with include "testrun.poolLabel" . }}
    {{- . | nindent 4 }}
    {{- end }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "testrun.workloadName" . }}
  pollingInterval: {{ int $keda.pollingInterval }}
  minReplicaCount: {{ int $scaling.minReplicas }}
  maxReplicaCount: {{ int $scaling.maxReplicas }}
  {{- with $scaling.behavior }}
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        {{- toYaml . | nindent 8 }}
  {{- end }}
  triggers:
    - type: prometheus
      metricType: AverageValue
      metadata:
        serverAddress: {{ $keda.serverAddress | quote }}
        query: >-
          (sum(max by (pool) (testrun_tests_waiting{namespace="{{ $ns }}",job="{{ $runs }}",pool=~"{{ $pools }}"})) or vector(0))
          + (sum(testrun_executor_slots{namespace="{{ $ns }}",job="{{ $executors }}",executor_pool="{{ .pool }}",state="busy"}) or vector(0))
        threshold: {{ $perReplica | quote }}
        ignoreNullValues: "false"
      {{- with $keda.authenticationRef }}
      authenticationRef:
        name: {{ . }}
      {{- end }}
{{- end -}}
