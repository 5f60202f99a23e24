# Lab stand-in: the operator Deployment never runs here; the lab controller plays its part.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-operator
  namespace: {{ .Release.Namespace }}
  labels:
    app: gpu-operator
    gpucloud.baremetal/lab-stand-in: "true"
spec:
  replicas: 1
  selector:
    matchLabels:
      app: gpu-operator
  template:
    metadata:
      labels:
        app: gpu-operator
    spec:
      containers:
        - name: gpu-operator
          image: nvcr.io/nvidia/gpu-operator:{{ .Chart.AppVersion }}
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
  labels:
    gpucloud.baremetal/lab-stand-in: "true"
spec:
  operator:
    defaultRuntime: {{ .Values.operator.defaultRuntime }}
  daemonsets:
    tolerations: {{ toYaml .Values.daemonsets.tolerations | nindent 6 }}
  driver:
    enabled: {{ .Values.driver.enabled }}
  toolkit:
    enabled: {{ .Values.toolkit.enabled }}
    {{- with .Values.toolkit.env }}
    env: {{ toJson . }}
    {{- end }}
  devicePlugin:
    enabled: {{ .Values.devicePlugin.enabled }}
    {{- with .Values.devicePlugin.env }}
    env: {{ toJson . }}
    {{- end }}
  dcgm:
    enabled: {{ .Values.dcgm.enabled }}
  dcgmExporter:
    enabled: {{ .Values.dcgmExporter.enabled }}
    {{- if .Values.dcgmExporter.hostNetwork }}
    hostNetwork: {{ .Values.dcgmExporter.hostNetwork }}
    {{- end }}
    {{- with .Values.dcgmExporter.env }}
    env: {{ toJson . }}
    {{- end }}
    {{- if .Values.dcgmExporter.serviceMonitor }}
    serviceMonitor: {{ toYaml .Values.dcgmExporter.serviceMonitor | nindent 6 }}
    {{- end }}
    {{- /* As upstream's clusterpolicy.yaml (v26.7.0): the metrics ConfigMap's name goes to the ClusterPolicy. */}}
    {{- if and .Values.dcgmExporter.config .Values.dcgmExporter.config.name }}
    config:
      name: {{ .Values.dcgmExporter.config.name }}
    {{- end }}
  gfd:
    enabled: {{ .Values.gfd.enabled }}
  nodeStatusExporter:
    enabled: {{ .Values.nodeStatusExporter.enabled }}
  migManager:
    enabled: {{ .Values.migManager.enabled }}
  mig:
    strategy: {{ .Values.mig.strategy }}
  cdi:
    enabled: {{ .Values.cdi.enabled }}
    default: {{ .Values.cdi.default }}
{{- /* As upstream's dcgm_exporter_config.yaml (v26.7.0): with config.create and data, the chart makes the
       ConfigMap the operator mounts into dcgm-exporter (key dcgm-metrics.csv, in the release's namespace). */}}
{{- if and .Values.dcgmExporter.config .Values.dcgmExporter.config.create .Values.dcgmExporter.config.data }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Values.dcgmExporter.config.name }}
  namespace: {{ .Release.Namespace }}
  labels:
    gpucloud.baremetal/lab-stand-in: "true"
data:
  dcgm-metrics.csv: |
{{- .Values.dcgmExporter.config.data | nindent 4 }}
{{- end }}
