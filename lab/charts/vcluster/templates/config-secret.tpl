# As the real chart (loft-sh/vcluster chart/templates/config-secret.yaml): the release's values, which
# the control plane reads at start. The lab controller reads controlPlane.endpoint, proxy.extraSANs
# and privateNodes.enabled from here.
apiVersion: v1
kind: Secret
metadata:
  name: "vc-config-{{ .Release.Name }}"
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: "{{ .Release.Name }}"
    heritage: "{{ .Release.Service }}"
type: Opaque
data:
  config.yaml: {{ .Values | toYaml | b64enc | quote }}
