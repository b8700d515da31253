{{/*
Shared pieces of the gateway chart. Templates that take a "context" expect
(dict "root" $ "component" "<edge|registry|auth-flow|onboarding|...>" "values" <the service's values>).
*/}}

{{/* Chart name, or nameOverride. */}}
{{- define "gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's prefix: fullnameOverride, the release name when it contains the chart name, or <release>-<chart>. */}}
{{- define "gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* <fullname>-<component>: the name of a component's Deployment, Service, PDB, HPA and NetworkPolicy. */}}
{{- define "gateway.componentName" -}}
{{- printf "%s-%s" (include "gateway.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object; takes a context. */}}
{{- define "gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/* Selector labels of one component, or of every pod of the release when component is "". */}}
{{- define "gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gateway.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/* <image.registry>/<repository>:<tag>; takes a context whose values have an image. */}}
{{- define "gateway.image" -}}
{{- $tag := .values.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- if .root.Values.image.registry }}
{{- printf "%s/%s:%s" (.root.Values.image.registry | trimSuffix "/") .values.image.repository $tag }}
{{- else }}
{{- printf "%s:%s" .values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The ConfigMap of the non-secret configuration; takes the root. */}}
{{- define "gateway.configMapName" -}}
{{- include "gateway.componentName" (dict "root" . "component" "config") }}
{{- end }}

{{/* The Secret holding the secret variables: secrets.existingSecret or the chart's; takes the root. */}}
{{- define "gateway.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "gateway.componentName" (dict "root" . "component" "secrets") }}
{{- end }}
{{- end }}

{{/* http://<service>:<port> of an internal service, as the edge and auth-flow call it; takes a context. */}}
{{- define "gateway.serviceUrl" -}}
{{- printf "http://%s:%v" (include "gateway.componentName" .) .values.port }}
{{- end }}

{{/*
"true" when config names a Sentinel or Cluster Redis (REDIS_SENTINELS, REDIS_CLUSTER_NODES):
then no process gets REDIS_URL (naming the Redis two ways is refused) and none requires it;
takes the root.
*/}}
{{- define "gateway.redisNamedInConfig" -}}
{{- if or .Values.config.REDIS_SENTINELS .Values.config.REDIS_CLUSTER_NODES }}true{{ end }}
{{- end }}

{{/*
Environment variables read from Secrets; takes (dict "root" $ "required" (list ...) "optional" (list ...)).
Each comes from secrets.refs.<NAME> when set, otherwise from key <NAME> of the Secret named
by gateway.secretName. A required one must have a value when the chart creates the Secret.
*/}}
{{- define "gateway.secretEnv" -}}
{{- $root := .root }}
{{- range .required }}
{{ include "gateway.secretEnvVar" (dict "root" $root "name" . "optional" false) }}
{{- end }}
{{- range .optional }}
{{ include "gateway.secretEnvVar" (dict "root" $root "name" . "optional" true) }}
{{- end }}
{{- end }}

{{- define "gateway.secretEnvVar" -}}
{{- $secrets := .root.Values.secrets }}
{{- $ref := get $secrets.refs .name }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      {{- if $ref }}
      name: {{ $ref.name }}
      key: {{ $ref.key }}
      {{- else }}
      name: {{ include "gateway.secretName" .root }}
      key: {{ .name }}
      {{- end }}
      {{- if .optional }}
      optional: true
      {{- else if not (or $ref $secrets.existingSecret) }}
      {{- $_ := required (printf "secrets.values.%s is required (or set secrets.existingSecret or secrets.refs.%s)" .name .name) (get $secrets.values .name) }}
      {{- end }}
{{- end }}

{{/* Pod-level settings shared by every pod; takes a context. */}}
{{- define "gateway.podSpec" -}}
{{- $root := .root }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with $root.Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with $root.Values.image.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: {{ $root.Values.securityContext.runAsUser }}
  runAsGroup: {{ $root.Values.securityContext.runAsGroup }}
  fsGroup: {{ $root.Values.securityContext.runAsGroup }}
  seccompProfile:
    type: RuntimeDefault
{{- with $root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ $root.Values.tmpSizeLimit }}
{{- end }}

{{/* Spreads a Deployment's pods by the constraints of topologySpread; takes a context. */}}
{{- define "gateway.topologySpread" -}}
{{- if .root.Values.topologySpread }}
topologySpreadConstraints:
  {{- range .root.Values.topologySpread }}
  - topologyKey: {{ .topologyKey }}
    maxSkew: {{ .maxSkew }}
    whenUnsatisfiable: {{ .whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "gateway.selectorLabels" $ | nindent 8 }}
  {{- end }}
{{- end }}
{{- end }}

{{/* Container settings shared by every container: security, resources, /tmp; takes a context. */}}
{{- define "gateway.containerCommon" -}}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
resources:
  {{- toYaml .values.resources | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- end }}

{{/* Timing fields of a probe; takes one entry of .Values.probes. */}}
{{- define "gateway.probeTiming" -}}
periodSeconds: {{ .periodSeconds }}
timeoutSeconds: {{ .timeoutSeconds }}
failureThreshold: {{ .failureThreshold }}
{{- end }}

{{/*
Pod annotations: checksums of the ConfigMap and, for pods that read secrets ("secrets" true in
the context), of the chart's Secret, so pods roll when they change; the prometheus.io scrape
annotations when metrics.enabled and metrics.podAnnotations; then podAnnotations.
*/}}
{{- define "gateway.podAnnotations" -}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
{{- if .secrets }}
checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
{{- end }}
{{- if .root.Values.metrics.enabled }}
{{- if .root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ include "gateway.metricsPort" .root | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end }}
{{- with .values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
metrics.port, the METRICS_PORT of every process, refused when it equals a service port (the
process would fail to listen twice on it); takes the root.
*/}}
{{- define "gateway.metricsPort" -}}
{{- if eq .Values.metrics.port .Values.edge.port .Values.registry.port .Values.authFlow.port .Values.onboarding.port }}
{{- fail (printf "metrics.port (%v) must differ from edge.port, registry.port, authFlow.port and onboarding.port" .Values.metrics.port) }}
{{- end }}
{{- .Values.metrics.port }}
{{- end }}

{{/*
The ClusterIP Service of a component, with the `metrics` port when metrics.enabled; takes a
context with "portName" and "appProtocol".
*/}}
{{- define "gateway.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "gateway.componentName" . }}
  labels:
    {{- include "gateway.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "gateway.selectorLabels" . | nindent 4 }}
  ports:
    - name: {{ .portName }}
      port: {{ .values.port }}
      targetPort: {{ .portName }}
      protocol: TCP
      appProtocol: {{ .appProtocol }}
    {{- if .root.Values.metrics.enabled }}
    - name: metrics
      port: {{ include "gateway.metricsPort" .root }}
      targetPort: metrics
      protocol: TCP
      appProtocol: http
    {{- end }}
{{- end }}

{{/* The PodDisruptionBudget of a component, when enabled; takes a context. */}}
{{- define "gateway.podDisruptionBudget" -}}
{{- if .values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "gateway.componentName" . }}
  labels:
    {{- include "gateway.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "gateway.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/* The CPU-based HorizontalPodAutoscaler of a component, when enabled; takes a context. */}}
{{- define "gateway.horizontalPodAutoscaler" -}}
{{- if .values.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "gateway.componentName" . }}
  labels:
    {{- include "gateway.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "gateway.componentName" . }}
  minReplicas: {{ .values.autoscaling.minReplicas }}
  maxReplicas: {{ .values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .values.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
{{- end }}
