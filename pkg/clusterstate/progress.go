package clusterstate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ProgressMode is how a Progress shows a cluster read.
type ProgressMode int

const (
	// ProgressQuiet shows nothing: stderr is a pipe or a CI log, and only the answer, the
	// errors and the warnings belong there.
	ProgressQuiet ProgressMode = iota
	// ProgressLine keeps one status line, rewritten in place (a carriage return), and clears
	// it when the read is done: stderr is a terminal.
	ProgressLine
	// ProgressVerbose prints a line per resource read (`read 12 httproutes.gateway.networking.k8s.io`),
	// as -v asks.
	ProgressVerbose
)

// Progress shows a person how a cluster read (ReadCluster, EachClusterPage, ReadAround)
// goes, in its mode; pass it as their progress writer. Writes to it are messages that must
// be seen whatever the mode (a warning of the API server): the status line is cleared
// before each and drawn again after it. Call Done when the read is over.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	mode  ProgressMode
	width int // the terminal's columns; 0 when not known

	resources map[schema.GroupResource]bool
	objects   int
	last      schema.GroupResource
	shown     int // runes of the status line on the screen now
	done      bool
}

// NewProgress shows progress on w in mode; width is the terminal's width in columns (0
// when not known), which the status line stays within so a carriage return reaches its
// start.
func NewProgress(w io.Writer, mode ProgressMode, width int) *Progress {
	return &Progress{w: w, mode: mode, width: width, resources: map[schema.GroupResource]bool{}}
}

// Mode is how p shows a read.
func (p *Progress) Mode() ProgressMode { return p.mode }

// Write writes a message that must be seen (a warning, an error) in every mode, on a line
// of its own.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	n, err := p.w.Write(b)
	if !p.done {
		p.draw()
	}
	return n, err
}

// Done clears the status line, so that what follows on the terminal starts on a clean line.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.done = true
}

// begin shows that a read started, before its first answer arrives.
func (p *Progress) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
}

// step shows one step of a read.
func (p *Progress) step(s readStep) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.mode {
	case ProgressVerbose:
		if s.how != readOneByName {
			fmt.Fprintln(p.w, s)
		}
	case ProgressLine:
		if s.how == readByNameTotal { // each was counted as it was read
			return
		}
		p.resources[s.resource] = true
		p.objects += s.objects
		p.last = s.resource
		p.draw()
	}
}

// draw writes the status line over the one on the screen (ProgressLine only).
func (p *Progress) draw() {
	if p.mode != ProgressLine || p.done {
		return
	}
	line := "reading the cluster"
	if len(p.resources) > 0 {
		line += fmt.Sprintf(": %d %s of %d %s, last %s", p.objects, plural(p.objects, "object", "objects"),
			len(p.resources), plural(len(p.resources), "kind", "kinds"), p.last)
	}
	line = fit(line, p.width-1) // a line as wide as the terminal may wrap, and \r not reach its start
	n := utf8.RuneCountInString(line)
	pad := strings.Repeat(" ", max(0, p.shown-n))
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	if pad != "" {
		fmt.Fprintf(p.w, "\r%s", line)
	}
	p.shown = n
}

// clear blanks the status line and returns to its start.
func (p *Progress) clear() {
	if p.shown == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.shown))
	p.shown = 0
}

// fit cuts s to at most width runes (no limit when width is not positive), marking the cut.
func fit(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	if width == 1 {
		return string(r[:1])
	}
	return string(r[:width-1]) + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readStep is one step of a cluster read: a resource listed, or objects read by name.
type readStep struct {
	resource schema.GroupResource
	objects  int // the objects kept
	listed   int // the objects listed, when a filter kept fewer (how == readFiltered)
	how      readHow
}

type readHow int

const (
	readListed      readHow = iota // every object of a resource, listed
	readFiltered                   // a resource listed, only the objects on the target's paths kept
	readOneByName                  // one object read by name
	readByNameTotal                // how many objects of a resource were read by name, at the end
)

// String is the step's -v line (nothing for readOneByName: readByNameTotal says it).
func (s readStep) String() string {
	switch s.how {
	case readFiltered:
		return fmt.Sprintf("read %d %s, of %d listed, on the target's paths", s.objects, s.resource, s.listed)
	case readByNameTotal:
		return fmt.Sprintf("read %d %s by name", s.objects, s.resource)
	default:
		return fmt.Sprintf("read %d %s", s.objects, s.resource)
	}
}
