package topology

import (
	"fmt"
	"strings"

	"github.com/policyattachment/webhook/pkg/rules/kinds"
	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// ParseTarget reads KIND/NAMESPACE/NAME (KIND/NAME for cluster-scoped kinds) into a key;
// KIND is any targetable kind, in any case, or its plural or short name.
func ParseTarget(s string) (policy.TargetKey, error) {
	return ParseTargetIn(s, "")
}

// ParseTargetIn is ParseTarget that also reads kubectl's KIND/NAME for a namespaced kind,
// in namespace (when namespace is not empty).
func ParseTargetIn(s, namespace string) (policy.TargetKey, error) {
	parts := strings.Split(s, "/")
	info, err := kinds.ParseKind(parts[0])
	if err != nil {
		return policy.TargetKey{}, fmt.Errorf("%q: %w", s, err)
	}
	switch {
	case info.Scope == kinds.Cluster && len(parts) == 2 && parts[1] != "":
		return policy.TargetKey{Group: info.Group, Kind: info.Kind, Name: parts[1]}, nil
	case info.Scope == kinds.Namespaced && len(parts) == 3 && parts[1] != "" && parts[2] != "":
		return policy.TargetKey{Group: info.Group, Kind: info.Kind, Namespace: parts[1], Name: parts[2]}, nil
	case info.Scope == kinds.Namespaced && len(parts) == 2 && parts[1] != "" && namespace != "":
		return policy.TargetKey{Group: info.Group, Kind: info.Kind, Namespace: namespace, Name: parts[1]}, nil
	case info.Scope == kinds.Cluster:
		return policy.TargetKey{}, fmt.Errorf("%q: %s is cluster-scoped; use %s/NAME", s, info.Kind, info.Kind)
	default:
		return policy.TargetKey{}, fmt.Errorf("%q: use %s/NAME (with -n NAMESPACE) or %s/NAMESPACE/NAME", s, info.Kind, info.Kind)
	}
}
