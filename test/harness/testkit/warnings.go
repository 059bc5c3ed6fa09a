// Package testkit holds helpers shared by test suites: files in a temporary folder, and the
// clients and warning handlers of the suites that talk to a real API server.
package testkit

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Warnings collects the warnings the API server passes on to a client (a
// rest.WarningHandler), the way kubectl prints them.
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *Warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// Take returns the warnings received so far and forgets them.
func (w *Warnings) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// NewClient returns a client for cfg that records the API server's warnings.
func NewClient(t testing.TB, cfg *rest.Config) (client.Client, *Warnings) {
	t.Helper()
	w := &Warnings{}
	c := rest.CopyConfig(cfg)
	c.WarningHandler = w
	cl, err := client.New(c, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return cl, w
}
