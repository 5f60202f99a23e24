# Lab stand-in: the scheduler Deployment never runs here (no kubelet); queues are plain CRs.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kai-scheduler
  namespace: {{ .Release.Namespace }}
  labels:
    app: kai-scheduler
    gpucloud.baremetal/lab-stand-in: "true"
spec:
  replicas: 1
  selector:
    matchLabels:
      app: kai-scheduler
  template:
    metadata:
      labels:
        app: kai-scheduler
    spec:
      containers:
        - name: scheduler
          image: {{ .Values.global.registry }}/scheduler:{{ .Chart.AppVersion }}
