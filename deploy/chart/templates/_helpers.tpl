{{/* The image of the webhook, the reports writer and the uninstall hook. */}}
{{- define "policyattachment.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The API groups of the built-in policy kinds (README, "Built-in policy kinds"). */}}
{{- define "policyattachment.policyGroups" -}}
[gateway.networking.k8s.io, gateway.networking.x-k8s.io, gateway.envoyproxy.io, kuadrant.io, extensions.kuadrant.io, gateway.nginx.org, gateway.kgateway.dev, agentgateway.dev, security.istio.io, telemetry.istio.io, extensions.istio.io, networking.istio.io, aigateway.envoyproxy.io, policy.linkerd.io, policies.controller.io, networking.gke.io, application-networking.k8s.aws, agentic.networking.x-k8s.io]
{{- end }}

{{/* Their resources; test/deploy checks every built-in kind is here. */}}
{{- define "policyattachment.policyResources" -}}
backendtlspolicies, xbackendtrafficpolicies, xtelemetrypolicies, backendtrafficpolicies, clienttrafficpolicies, securitypolicies, envoyextensionpolicies, envoypatchpolicies, authpolicies, ratelimitpolicies, tokenratelimitpolicies, dnspolicies, tlspolicies, oidcpolicies, planpolicies, telemetrypolicies, threatpolicies, clientsettingspolicies, observabilitypolicies, proxysettingspolicies, upstreamsettingspolicies, snippetspolicies, wafpolicies, payloadprocessors, trafficpolicies, listenerpolicies, httplistenerpolicies, backendconfigpolicies, agentgatewaypolicies, authorizationpolicies, requestauthentications, telemetries, wasmplugins, colorpolicies, envoyfilters, backendsecuritypolicies, quotapolicies, gcpbackendpolicies, healthcheckpolicies, gcpgatewaypolicies, gcptrafficdistributionpolicies, targetgrouppolicies, iamauthpolicies, vpcassociationpolicies, accesslogpolicies, xaccesspolicies, httplocalratelimitpolicies, trafficextensions
{{- end }}

{{/* Which namespaces the policy webhooks review: never kube-system nor the release's own
(so the webhook can always be repaired, whether or not the namespace carries the skip label),
nor a namespace labelled policyattachment.io/webhook=skip. */}}
{{- define "policyattachment.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, {{ .Release.Namespace }}]}
  - {key: policyattachment.io/webhook, operator: NotIn, values: [skip]}
  {{- with .Values.webhook.namespaceSelector.matchExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* The caBundle the webhook configurations carry when cert-manager does not inject it. */}}
{{- define "policyattachment.caBundle" -}}
{{- if not .Values.certificates.certManager.enabled }}
caBundle: {{ required "certificates.provided.caBundle: the PEM of the CA that signed the serving certificate (or enable certificates.certManager)" .Values.certificates.provided.caBundle | b64enc }}
{{- end }}
{{- end }}

{{/* The cainjector annotation of the webhook configurations. */}}
{{- define "policyattachment.webhookAnnotations" -}}
{{- if .Values.certificates.certManager.enabled }}
annotations: {cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/policyattachment-webhook}
{{- end }}
{{- end }}

{{/* The pod security settings every container of the chart runs with. */}}
{{- define "policyattachment.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile: {type: RuntimeDefault}
{{- end }}
{{- define "policyattachment.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: [ALL]}
{{- end }}

{{/* The config file, as the ConfigMap carries it. */}}
{{- define "policyattachment.config" -}}
{{ toYaml .Values.config }}
{{- end }}

{{/* The Secret the serving certificate is read from. */}}
{{- define "policyattachment.tlsSecret" -}}
{{- if .Values.certificates.certManager.enabled -}}
policyattachment-webhook-tls
{{- else -}}
{{ .Values.certificates.provided.existingSecret | default "policyattachment-webhook-tls" }}
{{- end }}
{{- end }}
