{{/*
The objects of one component, shared by all of them (templates/components.yaml renders each).
Every template takes (dict "root" $ "name" "<component>"); those of one Deployment (its ConfigMap,
Deployment, HPA, PDB) also "pool" and "values" (testrun.workloads: an executor pool's, say).
*/}}

{{- define "testrun.component.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "testrun.workloadName" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
    {{- with include "testrun.poolLabel" . }}
    {{- . | nindent 4 }}
    {{- end }}
data:
  {{- include "testrun.config" . | nindent 2 }}
{{- end -}}

{{- define "testrun.component.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "testrun.name" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
# No component talks to the Kubernetes API.
automountServiceAccountToken: false
{{- end -}}

{{- define "testrun.component.service" -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "testrun.name" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  {{- if $facts.headless }}
  clusterIP: None
  {{- end }}
  selector:
    {{- include "testrun.selectorLabels" . | nindent 4 }}
  ports:
    {{- if $facts.httpPort }}
    - name: http
      port: {{ $facts.httpPort }}
      targetPort: http
      protocol: TCP
      appProtocol: http
    {{- end }}
    - name: grpc
      port: {{ $facts.port }}
      targetPort: grpc
      protocol: TCP
      # Connect, gRPC and gRPC-Web over cleartext HTTP/2.
      appProtocol: kubernetes.io/h2c
    # GET /metrics for Prometheus (HTTP/1.1); never behind the Ingress or HTTPRoute.
    - name: metrics
      port: {{ $facts.metricsPort }}
      targetPort: metrics
      protocol: TCP
      appProtocol: http
{{- end -}}

{{- define "testrun.component.probe" -}}
{{- $facts := .facts -}}
{{- if $facts.httpPort }}
httpGet:
  path: {{ .path }}
  port: http
{{- else }}
grpc:
  port: {{ $facts.port }}
  service: {{ .service | default "" | quote }}
{{- end }}
periodSeconds: {{ .timing.periodSeconds }}
timeoutSeconds: {{ .timing.timeoutSeconds }}
failureThreshold: {{ .timing.failureThreshold }}
{{- end -}}

{{- define "testrun.component.deployment" -}}
{{- $root := .root -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
{{- $probes := $root.Values.probes -}}
{{- $browsers := include "testrun.runsBrowsers" . -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "testrun.workloadName" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
    {{- with include "testrun.poolLabel" . }}
    {{- . | nindent 4 }}
    {{- end }}
spec:
  {{- if not (include "testrun.autoscaled" .) }}
  replicas: {{ int $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "testrun.workloadSelectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # A new pod is ready before an old one goes: a rollout never lowers the capacity.
      maxUnavailable: 0
      maxSurge: 25%
  template:
    metadata:
      labels:
        {{- include "testrun.labels" . | nindent 8 }}
        {{- with include "testrun.poolLabel" . }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Pods roll when their configuration or the Secret's source changes.
        checksum/config: {{ include "testrun.config" . | sha256sum }}
        checksum/secret: {{ printf "%s" $root.Values.secrets.existingSecret | sha256sum }}
        {{- if and (eq (include "testrun.specSandbox" .) "true") (not (include "testrun.appArmorField" $root)) }}
        # The sandbox of Playwright specs mounts; before Kubernetes 1.30 only this annotation unconfines it.
        container.apparmor.security.beta.kubernetes.io/{{ .name }}: unconfined
        {{- end }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "testrun.name" . }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- include "testrun.podSecurityContext" $root | nindent 8 }}
      # The drain, the shutdown timeout and a margin: Kubernetes never kills a pod still finishing.
      terminationGracePeriodSeconds: {{ add (div (add (include "testrun.shutdownMs" $values) 999) 1000) (int $root.Values.shutdownMarginSeconds) }}
      {{- with $values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "testrun.topologySpread" . | trim }}
      topologySpreadConstraints:
        {{- . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .name }}
          image: {{ include "testrun.workloadImage" . }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .name | quote }}]
          ports:
            {{- if $facts.httpPort }}
            - name: http
              containerPort: {{ $facts.httpPort }}
              protocol: TCP
            {{- end }}
            - name: grpc
              containerPort: {{ $facts.port }}
              protocol: TCP
            - name: metrics
              containerPort: {{ $facts.metricsPort }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "testrun.workloadName" . }}
          env:
            {{- include "testrun.secretEnv" . | trim | nindent 12 }}
            {{- with $facts.podNameVariable }}
            - name: {{ . }}
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            {{- end }}
          startupProbe:
            {{- include "testrun.component.probe" (dict "facts" $facts "path" "/healthz" "timing" $probes.startup) | trim | nindent 12 }}
          livenessProbe:
            {{- include "testrun.component.probe" (dict "facts" $facts "path" "/healthz" "timing" $probes.liveness) | trim | nindent 12 }}
          readinessProbe:
            {{- include "testrun.component.probe" (dict "facts" $facts "path" "/readyz" "service" $facts.readiness "timing" $probes.readiness) | trim | nindent 12 }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- include "testrun.workloadSecurityContext" . | nindent 12 }}
          volumeMounts:
            {{- include "testrun.tmpMount" . | nindent 12 }}
            {{- if $browsers }}
            {{- include "testrun.shmMount" . | nindent 12 }}
            {{- end }}
      volumes:
        {{- if $browsers }}
        {{- include "testrun.tmpVolume" (dict "tmpSizeLimit" $values.browser.tmpSizeLimit) | nindent 8 }}
        {{- include "testrun.shmVolume" (dict "sizeLimit" $values.browser.shmSizeLimit) | nindent 8 }}
        {{- else }}
        {{- include "testrun.tmpVolume" . | nindent 8 }}
        {{- end }}
{{- end -}}

{{- define "testrun.component.hpa" -}}
{{- $values := fromYaml (include "testrun.values" .) -}}
{{- $scaling := $values.autoscaling -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
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
  minReplicas: {{ int $scaling.minReplicas }}
  maxReplicas: {{ int $scaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ int $scaling.targetCPUUtilizationPercentage }}
    {{- with $scaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ int . }}
    {{- end }}
  {{- with $scaling.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{- define "testrun.component.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "testrun.workloadName" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
    {{- with include "testrun.poolLabel" . }}
    {{- . | nindent 4 }}
    {{- end }}
spec:
  maxUnavailable: {{ .root.Values.podDisruptionBudget.maxUnavailable }}
  # A pod that is not ready serves nothing to protect (an executor pool whose browser does not
  # start is not ready): evicting it never waits on the budget, so a node drain is not held by it.
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector:
    matchLabels:
      {{- include "testrun.workloadSelectorLabels" . | nindent 6 }}
{{- end -}}

{{/* A pod selector for several components (or other parts) of this release. */}}
{{- define "testrun.peerSelector" -}}
podSelector:
  matchLabels:
    app.kubernetes.io/name: testrun
    app.kubernetes.io/instance: {{ .root.Release.Name }}
  matchExpressions:
    - key: app.kubernetes.io/component
      operator: In
      values: {{ toJson .components }}
{{- end -}}

{{/*
Who may reach the HTTP ports (the gateway's and the console's): networkPolicy.gatewayFrom; else,
when the gateway believes X-Forwarded-For (TRUST_PROXY_HOPS above 0), only the ingress controller,
since anyone else could name any client address (another's, to spend its failed authentications);
else anyone. A YAML list of NetworkPolicy peers, empty for anyone.
*/}}
{{- define "testrun.httpPeers" -}}
{{- $policy := .Values.networkPolicy -}}
{{- if $policy.gatewayFrom -}}
{{- toYaml $policy.gatewayFrom -}}
{{- else if gt (int (include "testrun.trustProxyHops" .)) 0 -}}
{{- $controller := $policy.ingressController -}}
{{- if not (or $controller.namespace $controller.podLabels) -}}
{{- fail "networkPolicy.ingressController needs a namespace or podLabels: the gateway trusts X-Forwarded-For (config.trustProxyHops above 0, or the ingress or HTTPRoute on), so only the ingress controller may reach it; or list the peers in networkPolicy.gatewayFrom (see docs/deploy.md, Network policies)" -}}
{{- end -}}
- namespaceSelector:
    {{- if $controller.namespace }}
    matchLabels:
      kubernetes.io/metadata.name: {{ $controller.namespace | quote }}
    {{- else }} {}
    {{- end }}
  podSelector:
    {{- with $controller.podLabels }}
    matchLabels:
      {{- toYaml . | nindent 6 }}
    {{- else }} {}
    {{- end }}
{{- end -}}
{{- end -}}

{{/*
Who may connect to a component: the HTTP ports as testrun.httpPeers says,
every gRPC port only from the components whose config names it (their <NAME>_URL), the metrics
port only from metrics.scrapeFrom (nobody when empty). The kubelet's
probes come from the pod's node, which Kubernetes says a NetworkPolicy cannot block (up to the CNI:
docs/deploy.md, Network policies).
*/}}
{{- define "testrun.component.networkPolicy" -}}
{{- $root := .root -}}
{{- $facts := fromYaml (include "testrun.facts" .) -}}
{{- $callers := fromYamlArray (include "testrun.callers" .) -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "testrun.name" . }}
  labels:
    {{- include "testrun.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "testrun.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  {{- $scrapers := $root.Values.metrics.scrapeFrom }}
  {{- if or $facts.httpPort $callers $scrapers }}
  ingress:
    {{- if $facts.httpPort }}
    - ports:
        - port: {{ $facts.httpPort }}
          protocol: TCP
      {{- with include "testrun.httpPeers" $root }}
      from:
        {{- . | nindent 8 }}
        {{- if $root.Values.tests.enabled }}
        # The helm test pod.
        - {{ include "testrun.peerSelector" (dict "root" $root "components" (list "test")) | indent 10 | trim }}
        {{- end }}
      {{- end }}
    {{- end }}
    {{- if $callers }}
    - ports:
        - port: {{ $facts.port }}
          protocol: TCP
      from:
        - {{ include "testrun.peerSelector" (dict "root" $root "components" $callers) | indent 10 | trim }}
    {{- end }}
    {{- with $scrapers }}
    - ports:
        - port: {{ $facts.metricsPort }}
          protocol: TCP
      from:
        {{- toYaml . | nindent 8 }}
    {{- end }}
  {{- else }}
  # Nobody calls it.
  ingress: []
  {{- end }}
{{- end -}}
