package clusterstate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	routes   = schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "httproutes"}
	gateways = schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "gateways"}
	grants   = schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}
)

// aRead is what ReadAround tells its progress through a route: a kind listed whole, a route
// kind listed with only the target's routes kept, a Gateway read by name, the totals by name.
func aRead(p *Progress, warn string) {
	p.begin()
	p.step(readStep{resource: grants, objects: 3, how: readListed})
	p.step(readStep{resource: routes, objects: 2, listed: 40, how: readFiltered})
	if warn != "" {
		fmt.Fprint(p, warn)
	}
	p.step(readStep{resource: gateways, objects: 1, how: readOneByName})
	p.step(readStep{resource: gateways, objects: 1, how: readByNameTotal})
	p.Done()
}

// TestProgressModes: -v prints a line per step, exactly the lines of before; a terminal
// gets one status line rewritten in place and cleared at the end; a pipe gets nothing. A
// warning reaches every one of them, on a line of its own.
func TestProgressModes(t *testing.T) {
	const warning = "Warning: gateway.networking.k8s.io/v1beta1 HTTPRoute is deprecated\n"
	const (
		v1 = "read 3 referencegrants.gateway.networking.k8s.io\n"
		v2 = "read 2 httproutes.gateway.networking.k8s.io, of 40 listed, on the target's paths\n"
		v3 = "read 1 gateways.gateway.networking.k8s.io by name\n"
	)
	const (
		l0 = "reading the cluster"
		l1 = "reading the cluster: 3 objects of 1 kind, last referencegrants.gateway.networking.k8s.io"
		l2 = "reading the cluster: 5 objects of 2 kinds, last httproutes.gateway.networking.k8s.io"
		l3 = "reading the cluster: 6 objects of 3 kinds, last gateways.gateway.networking.k8s.io"
	)
	// over is line drawn over the longer one before it: blanks to its end, then the line again.
	over := func(line, before string) string {
		return "\r" + line + strings.Repeat(" ", len(before)-len(line)) + "\r" + line
	}
	clear := func(line string) string { return "\r" + strings.Repeat(" ", len(line)) + "\r" }
	for name, tc := range map[string]struct {
		mode       ProgressMode
		warn, want string
	}{
		"verbose":              {mode: ProgressVerbose, want: v1 + v2 + v3},
		"verbose with warning": {mode: ProgressVerbose, warn: warning, want: v1 + v2 + warning + v3},
		"piped":                {mode: ProgressQuiet, want: ""},
		"piped with warning":   {mode: ProgressQuiet, warn: warning, want: warning},
		"terminal":             {mode: ProgressLine, want: "\r" + l0 + "\r" + l1 + over(l2, l1) + over(l3, l2) + clear(l3)},
		"terminal with warning": {mode: ProgressLine, warn: warning,
			want: "\r" + l0 + "\r" + l1 + over(l2, l1) + clear(l2) + warning + "\r" + l2 + over(l3, l2) + clear(l3)},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			aRead(NewProgress(&b, tc.mode, 0), tc.warn)
			assert.Equal(t, tc.want, b.String())
		})
	}
}

// TestProgressLineFitsTheTerminal: the status line stays narrower than the terminal (a
// line that wraps leaves its first row behind at each carriage return); once done, nothing
// is drawn again.
func TestProgressLineFitsTheTerminal(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, ProgressLine, 40)
	p.step(readStep{resource: routes, objects: 12, how: readListed})
	assert.Equal(t, "\rreading the cluster: 12 objects of 1 k…", b.String())
	b.Reset()
	p.Done()
	assert.Equal(t, "\r"+strings.Repeat(" ", 39)+"\r", b.String())
	b.Reset()
	fmt.Fprint(p, "an error\n")
	p.step(readStep{resource: gateways, objects: 1, how: readListed})
	assert.Equal(t, "an error\n", b.String(), "nothing drawn after Done")
}

// TestReadStepsToAWriter: a plain writer (io.Discard for the reports loop, a buffer in
// tests) gets the -v lines, as before there was a Progress.
func TestReadStepsToAWriter(t *testing.T) {
	var b bytes.Buffer
	r := &reader{progress: &b}
	r.step(readStep{resource: routes, objects: 2, how: readListed})
	r.step(readStep{resource: gateways, objects: 1, how: readOneByName})
	r.step(readStep{resource: gateways, objects: 1, how: readByNameTotal})
	assert.Equal(t, "read 2 httproutes.gateway.networking.k8s.io\nread 1 gateways.gateway.networking.k8s.io by name\n", b.String())
}
