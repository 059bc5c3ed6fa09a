package topology

import (
	"encoding/binary"

	"github.com/policyattachment/webhook/pkg/rules/policy"
)

// A route's stored references are TargetKeys packed into its text (RouteInfo): each of
// group, kind, namespace, name and section as its length (uvarint) followed by its bytes, so
// any text round-trips, a NUL included. Unpacking slices the text: it allocates nothing.

// appendKey appends k, packed, to b.
func appendKey(b []byte, k policy.TargetKey) []byte {
	for _, field := range [...]string{k.Group, k.Kind, k.Namespace, k.Name, k.Section} {
		b = binary.AppendUvarint(b, uint64(len(field)))
		b = append(b, field...)
	}
	return b
}

// unpackKey returns the key appendKey packed into s. Its strings are slices of s.
func unpackKey(s string) policy.TargetKey {
	var fields [5]string
	for i := range fields {
		n, w := uvarintIn(s)
		if w == 0 || uint64(len(s)-w) < n {
			return policy.TargetKey{} // never for a string appendKey made
		}
		fields[i], s = s[w:w+int(n)], s[w+int(n):]
	}
	return policy.TargetKey{Group: fields[0], Kind: fields[1], Namespace: fields[2], Name: fields[3], Section: fields[4]}
}

// uvarintIn decodes the uvarint s starts with and its width (0 when s holds none), as
// binary.Uvarint does for a []byte.
func uvarintIn(s string) (uint64, int) {
	var n uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		n |= uint64(s[i]&0x7f) << (7 * i)
		if s[i] < 0x80 {
			return n, i + 1
		}
	}
	return 0, 0
}
