# Lab stand-in for the tenant control plane. No pod runs here (no kubelet); the lab controller
# starts a real kube-apiserver + etcd for this release and publishes secret vc-<release>.
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: {{ .Release.Name }}
    gpucloud.baremetal/lab-stand-in: "true"
  annotations:
    gpucloud.baremetal/values-sha256: {{ toJson .Values | sha256sum }}
spec:
  serviceName: {{ .Release.Name }}-headless
  replicas: 1
  selector:
    matchLabels:
      app: vcluster
      release: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: vcluster
        release: {{ .Release.Name }}
    spec:
      containers:
        - name: syncer
          image: ghcr.io/loft-sh/vcluster-pro:{{ .Chart.AppVersion }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: {{ .Release.Name }}
spec:
  type: ClusterIP
  ports:
    - name: https
      port: 443
      targetPort: 8443
      protocol: TCP
  selector:
    app: vcluster
    release: {{ .Release.Name }}
