{{- define "shop.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
