package localcluster

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// FreePort returns a TCP port free on loopback now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitReady polls url (a webhook's /readyz) until it answers 200 or timeout passes.
func WaitReady(client *http.Client, url string, timeout time.Duration) error {
	var last error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := client.Get(url)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("status %s", resp.Status)
	}
	return fmt.Errorf("%s was not ready within %s: %v", url, timeout, last)
}
