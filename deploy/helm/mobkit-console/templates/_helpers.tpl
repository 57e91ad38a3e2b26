{{- define "mobkit-console.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mobkit-console.fullname" -}}
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

{{/* A name for one of the release's parts: the full name and a suffix, within 63 characters. */}}
{{- define "mobkit-console.partname" -}}
{{- printf "%s-%s" (include "mobkit-console.fullname" .root | trunc (int (sub 62 (len .part))) | trimSuffix "-") .part }}
{{- end }}

{{- define "mobkit-console.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "mobkit-console.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The console's pods; follow_replicas' pods carry component=follow-replicas instead. */}}
{{- define "mobkit-console.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mobkit-console.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: console
{{- end }}

{{- define "mobkit-console.followReplicasSelectorLabels" -}}
app.kubernetes.io/name: {{ include "mobkit-console.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: follow-replicas
{{- end }}

{{/* A pod's labels: its Deployment's selector and the version it runs. */}}
{{- define "mobkit-console.podLabels" -}}
{{ .selector }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
{{- with .root.Values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "mobkit-console.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mobkit-console.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mobkit-console.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "mobkit-console.accessConfigMap" -}}
{{- default (include "mobkit-console.partname" (dict "root" . "part" "access")) .Values.access.existingConfigMap }}
{{- end }}

{{- define "mobkit-console.hasAccess" -}}
{{- if or .Values.access.config .Values.access.existingConfigMap }}true{{ end }}
{{- end }}

{{- define "mobkit-console.hasReplicaSources" -}}
{{- if or .Values.replicaSources.sources .Values.replicaSources.existingSecret }}true{{ end }}
{{- end }}

{{/* Where access.toml is mounted: a directory, so a changed ConfigMap reaches the running console. */}}
{{- define "mobkit-console.accessDir" -}}/etc/mobkit-console/access{{- end }}

{{/* An env entry from secrets.<name>, or nothing when that Secret is not named. */}}
{{- define "mobkit-console.secretEnv" -}}
{{- if .secret.existingSecret }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret.existingSecret }}
      key: {{ .key | default .secret.key }}
{{- end }}
{{- end }}

{{/* The environment the console and follow_replicas share: the state, the realms' names, the secrets. */}}
{{- define "mobkit-console.sharedEnv" -}}
- name: MOBKIT_PERSISTENT_STATE
  value: {{ .Values.persistence.mountPath | quote }}
{{- if .Values.replicaSources.existingSecret }}
- name: MOBKIT_REPLICA_SOURCES
  valueFrom:
    secretKeyRef:
      name: {{ .Values.replicaSources.existingSecret }}
      key: {{ .Values.replicaSources.key }}
{{- else if .Values.replicaSources.sources }}
- name: MOBKIT_REPLICA_SOURCES
  value: {{ include "mobkit-console.replicaSourcesValue" . | quote }}
{{- end }}
- name: LOG_FORMAT
  value: {{ .Values.config.logFormat | quote }}
{{- with .Values.config.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- include "mobkit-console.secretEnv" (dict "env" "DJANGO_SECRET_KEY" "secret" .Values.secrets.secretKey) }}
{{- include "mobkit-console.secretEnv" (dict "env" "DATABASE_URL" "secret" .Values.secrets.databaseUrl) }}
{{- include "mobkit-console.secretEnv" (dict "env" "REDIS_URL" "secret" .Values.secrets.redisUrl) }}
{{- end }}

{{/* MOBKIT_REPLICA_SOURCES from the sources map: label=URL pairs in label order. */}}
{{- define "mobkit-console.replicaSourcesValue" -}}
{{- $pairs := list }}
{{- range $label, $url := .Values.replicaSources.sources }}
{{- $pairs = append $pairs (printf "%s=%s" $label $url) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{- define "mobkit-console.allowedHosts" -}}
{{- $hosts := .Values.config.allowedHosts }}
{{- if and (not $hosts) .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts .host }}
{{- end }}
{{- end }}
{{- join "," (default (list "localhost" "127.0.0.1") $hosts) }}
{{- end }}

{{/* The state volume: the claim, or an emptyDir that lasts as long as the pod. */}}
{{- define "mobkit-console.stateVolume" -}}
- name: state
{{- if .Values.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (include "mobkit-console.partname" (dict "root" . "part" "state")) .Values.persistence.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmp.sizeLimit }}
{{- end }}

{{- define "mobkit-console.podSecurity" -}}
serviceAccountName: {{ include "mobkit-console.serviceAccountName" . }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Placement the console and follow_replicas share. */}}
{{- define "mobkit-console.placement" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The secrets only the console reads: ingest, OIDC sign-in, the first admin. */}}
{{- define "mobkit-console.consoleSecretEnv" -}}
{{- include "mobkit-console.secretEnv" (dict "env" "MOBKIT_INGEST_TOKEN" "secret" .Values.secrets.ingestToken) }}
{{- include "mobkit-console.secretEnv" (dict "env" "MOBKIT_OIDC_CLIENT_SECRET" "secret" .Values.secrets.oidcClientSecret) }}
{{- with .Values.secrets.superuser }}
{{- include "mobkit-console.secretEnv" (dict "env" "DJANGO_SUPERUSER_USERNAME" "secret" . "key" .usernameKey) }}
{{- include "mobkit-console.secretEnv" (dict "env" "DJANGO_SUPERUSER_PASSWORD" "secret" . "key" .passwordKey) }}
{{- include "mobkit-console.secretEnv" (dict "env" "DJANGO_SUPERUSER_EMAIL" "secret" . "key" .emailKey) }}
{{- end }}
{{- end }}
