package localcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// deployedWebhooks reads the webhook configurations users install
// (deploy/base/webhooks.yaml), so local clusters and tests run with exactly those rules,
// selectors and failure policies.
func deployedWebhooks() (*admissionregv1.ValidatingWebhookConfiguration, *admissionregv1.MutatingWebhookConfiguration, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("locating the module: %w", err)
	}
	path := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "deploy", "base", "webhooks.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var (
		v *admissionregv1.ValidatingWebhookConfiguration
		m *admissionregv1.MutatingWebhookConfiguration
	)
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		switch kind.Kind {
		case "ValidatingWebhookConfiguration":
			v = &admissionregv1.ValidatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, v)
		case "MutatingWebhookConfiguration":
			m = &admissionregv1.MutatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, m)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if v == nil || m == nil {
		return nil, nil, fmt.Errorf("%s: needs a Validating- and a MutatingWebhookConfiguration", path)
	}
	return v, m, nil
}

// forEnvtest drops the leading "/" of each Service path: envtest joins host and path with
// one, and "//validate" would be redirected.
func forEnvtest(v *admissionregv1.ValidatingWebhookConfiguration, m *admissionregv1.MutatingWebhookConfiguration) {
	trim := func(cc *admissionregv1.WebhookClientConfig) {
		if cc.Service != nil && cc.Service.Path != nil {
			p := strings.TrimPrefix(*cc.Service.Path, "/")
			cc.Service.Path = &p
		}
	}
	for i := range v.Webhooks {
		trim(&v.Webhooks[i].ClientConfig)
	}
	for i := range m.Webhooks {
		trim(&m.Webhooks[i].ClientConfig)
	}
}
