{{- define "vidhost.name" -}}{{ .Chart.Name }}{{- end -}}

{{- define "vidhost.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "vidhost.labels" -}}
app.kubernetes.io/name: {{ include "vidhost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: include "vidhost.selector" (list . "api") */}}
{{- define "vidhost.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "vidhost.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "vidhost.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "vidhost.secretName" -}}
{{ .Values.existingSecret | default (printf "%s-secrets" (include "vidhost.fullname" .)) }}
{{- end -}}

{{- define "vidhost.serviceAccountName" -}}
{{ if .Values.serviceAccount.create }}{{ .Values.serviceAccount.name | default (include "vidhost.fullname" .) }}{{ else }}{{ .Values.serviceAccount.name | default "default" }}{{ end }}
{{- end -}}

{{/* Environment shared by every vidhost container: the ConfigMap, then the Secret. */}}
{{- define "vidhost.envFrom" -}}
- configMapRef:
    name: {{ include "vidhost.fullname" . }}
- secretRef:
    name: {{ include "vidhost.secretName" . }}
{{- end -}}

{{/* Writable places under a read-only root filesystem, and the Temporal client certificate. */}}
{{- define "vidhost.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /app/data
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: /etc/vidhost/temporal-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "vidhost.volumes" -}}
{{- $root := index . 0 -}}
{{- $scratch := index . 1 -}}
- name: tmp
  emptyDir:
    {{- if $scratch }}
    sizeLimit: {{ $scratch }}
    {{- else }}
    sizeLimit: 1Gi
    {{- end }}
- name: data
  emptyDir:
    sizeLimit: 1Gi
{{- if and $root.Values.temporal.tls.enabled $root.Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ $root.Values.temporal.tls.secretName }}
{{- end }}
{{- end -}}

{{- define "vidhost.podSpecCommon" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
