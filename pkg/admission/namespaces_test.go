package admission

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/policyattachment/webhook/pkg/rules"
)

func TestNamespaceGuard(t *testing.T) {
	guard := &NamespaceGuard{Allowed: rules.SkipLabelGuard{Groups: []string{"platform"}, ServiceAccounts: []string{"argocd/controller"}}}
	const (
		plain   = `{"metadata": {"name": "team-a", "labels": {"team": "a"}}}`
		skipped = `{"metadata": {"name": "team-a", "labels": {"team": "a", "policyattachment.io/webhook": "skip"}}}`
		other   = `{"metadata": {"name": "team-a", "labels": {"policyattachment.io/webhook": "review"}}}`
	)
	forbidden := func(verb string) string {
		return `the label policyattachment.io/webhook turns policy attachment review off in namespace "team-a", so user "alice" may not ` + verb +
			` it: that takes the verb "skip" on namespaces in API group policyattachment.io (RBAC), or a place in the webhook config's skipLabel list`
	}
	cases := map[string]struct {
		op          admissionv1.Operation
		old, object string
		user        string
		groups      []string
		want        string // "" admits
	}{
		"a tenant labels their namespace skip":              {op: admissionv1.Update, old: plain, object: skipped, user: "alice", want: forbidden("add")},
		"a tenant creates a namespace labelled skip":        {op: admissionv1.Create, object: skipped, user: "alice", want: forbidden("add")},
		"a tenant changes the label's value":                {op: admissionv1.Update, old: skipped, object: other, user: "alice", want: forbidden("change")},
		"a tenant removes the label":                        {op: admissionv1.Update, old: skipped, object: plain, user: "alice", want: forbidden("remove")},
		"a tenant changes another label":                    {op: admissionv1.Update, old: skipped, object: `{"metadata": {"name": "team-a", "labels": {"team": "b", "policyattachment.io/webhook": "skip"}}}`, user: "alice"},
		"a listed group adds it":                            {op: admissionv1.Update, old: plain, object: skipped, user: "bob", groups: []string{"system:authenticated", "platform"}},
		"a listed service account adds it":                  {op: admissionv1.Update, old: plain, object: skipped, user: "system:serviceaccount:argocd:controller"},
		"another service account of that namespace may not": {op: admissionv1.Update, old: plain, object: skipped, user: "system:serviceaccount:argocd:other", want: `the label policyattachment.io/webhook turns policy attachment review off in namespace "team-a", so user "system:serviceaccount:argocd:other" may not add it: that takes the verb "skip" on namespaces in API group policyattachment.io (RBAC), or a place in the webhook config's skipLabel list`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "1", Operation: tc.op, Name: "team-a",
				Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"},
				UserInfo: authenticationv1.UserInfo{Username: tc.user, Groups: tc.groups},
				Object:   runtime.RawExtension{Raw: []byte(tc.object)},
			}}
			if tc.old != "" {
				req.OldObject = runtime.RawExtension{Raw: []byte(tc.old)}
			}
			resp := guard.Handle(context.Background(), req)
			if tc.want == "" {
				assert.True(t, resp.Allowed)
				return
			}
			require.False(t, resp.Allowed)
			assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			assert.Equal(t, metav1.StatusReasonForbidden, resp.Result.Reason)
			assert.Equal(t, tc.want, resp.Result.Message)
		})
	}
}
