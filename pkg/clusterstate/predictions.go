package clusterstate

import (
	"github.com/policyattachment/webhook/pkg/rules/impact"
)

// ComparePredictions compares what the controllers wrote into the stored policies' status
// (kept from each watch event, bounded as impact.ObservedOf keeps them) with the prediction
// for each, a chunk of policies per read lock as Audit judges them; findings are the
// audit's: a policy with one is predicted Denied. It returns how many status entries it
// compared, by policy kind, and where they disagree.
func (s *Store) ComparePredictions(findings []impact.Finding) (compared map[string]int, out []impact.Disagreement) {
	denied := make(map[policyID][]string, len(findings))
	for _, f := range findings {
		denied[idOf(f.Policy)] = impact.ReasonsOf(f)
	}
	s.mu.RLock()
	compared = map[string]int{}
	if s.observed.Len() == 0 {
		s.mu.RUnlock()
		return compared, nil
	}
	policies := s.snap.Policies()
	s.mu.RUnlock()
	for start := 0; start < len(policies); start += auditChunk {
		s.mu.RLock()
		c := impact.NewComparer(s.snap)
		for _, p := range policies[start:min(start+auditChunk, len(policies))] {
			seen := s.observed.Of(p)
			if seen == nil {
				continue
			}
			n, d := c.Compare(p, seen, denied[idOf(p)])
			compared[p.Row.Kind] += n
			out = append(out, d...)
		}
		s.mu.RUnlock()
	}
	return compared, out
}
