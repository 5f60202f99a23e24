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
  daemonsets: {}
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
    {{- if .Values.dcgmExporter.serviceMonitor }}
    serviceMonitor: {{ toYaml .Values.dcgmExporter.serviceMonitor | nindent 6 }}
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
