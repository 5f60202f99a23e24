# Lab stand-in for the tenant control plane, after upstream's chart/templates/{statefulset,service,
# serviceaccount}.yaml (v0.36.1): the same names, labels and Service as the values give them. No pod runs
# here (no kubelet); the lab controller starts a real kube-apiserver + etcd for this release, publishes
# secret vc-<release>, and plays the pod behind this Service (its NodePort on the control-plane host).
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Values.controlPlane.advanced.serviceAccount.name | default (printf "vc-%s" .Release.Name) }}
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: "{{ .Release.Name }}"
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: {{ .Release.Name | quote }}
    gpucloud.baremetal/lab-stand-in: "true"
    {{- with .Values.controlPlane.statefulSet.labels }}
{{ toYaml . | indent 4 }}
    {{- end }}
  annotations:
    gpucloud.baremetal/values-sha256: {{ toJson .Values | sha256sum }}
spec:
  serviceName: {{ .Release.Name }}-headless
  replicas: 1
  selector:
    matchLabels:
      app: vcluster
      release: {{ .Release.Name | quote }}
  template:
    metadata:
      labels:
        app: vcluster
        release: {{ .Release.Name | quote }}
        {{- with .Values.controlPlane.statefulSet.pods.labels }}
{{ toYaml . | indent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ .Values.controlPlane.advanced.serviceAccount.name | default (printf "vc-%s" .Release.Name) }}
      containers:
        - name: syncer
          {{- $image := .Values.controlPlane.statefulSet.image }}
          image: "{{ $image.registry }}/{{ $image.repository }}:{{ $image.tag | default .Chart.AppVersion }}"
          securityContext:
{{ toYaml .Values.controlPlane.statefulSet.security.containerSecurityContext | indent 12 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
  labels:
    app: vcluster
    release: "{{ .Release.Name }}"
    vcluster.loft.sh/service: "true"
    {{- with .Values.controlPlane.service.labels }}
{{ toYaml . | indent 4 }}
    {{- end }}
spec:
{{ toYaml .Values.controlPlane.service.spec | indent 2 }}
  ports:
    - name: https
      port: 443
      targetPort: 8443
      {{- if and .Values.controlPlane.service.httpsNodePort (ne .Values.controlPlane.service.spec.type "ClusterIP") }}
      nodePort: {{ .Values.controlPlane.service.httpsNodePort }}
      {{- end }}
      protocol: TCP
  selector:
    app: vcluster
    release: {{ .Release.Name | quote }}
