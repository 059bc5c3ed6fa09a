package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// timeTools runs the offline tools on the cluster the webhook served (source: -f of the
// snapshot's files, or --kubeconfig of the cluster: audit reads a cluster when given no
// manifests, explain with --cluster), output discarded, and prints each one's wall time and
// peak RSS: `webhook audit` reads and replays everything; `webhook explain --target` of a
// Gateway prints the effective policies on its paths (ten routes of ten rules at any
// scale), reading only those paths with --cluster.
func timeTools(bin string, source []string) error {
	const gateway = "gateway/infra/gw-5"
	explain := append([]string{"explain", "--target", gateway, "-o", "json"}, source...)
	if !slices.Contains(source, "-f") {
		explain = append(explain, "--cluster")
	}
	for _, tool := range []struct {
		name string
		args []string
		// exits lists the exit codes that are answers, not failures.
		exits []int
	}{
		{"audit", append([]string{"audit", "-o", "json"}, source...), []int{0, 1}},
		{"explain --target " + gateway, explain, []int{0}},
	} {
		cmd := exec.Command(bin, tool.args...)
		cmd.Stdout = io.Discard
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && contains(tool.exits, exit.ExitCode())) {
			return fmt.Errorf("webhook %s: %v\n%s", strings.Join(tool.args, " "), err, stderr.String())
		}
		peak := int64(0)
		if usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = usage.Maxrss / 1024 // KiB on Linux
		}
		fmt.Printf("load: webhook %s: %s, %d MiB peak RSS\n", tool.name, took.Round(10*time.Millisecond), peak)
	}
	return nil
}

func contains(codes []int, code int) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// printListed prints the start-up log's "listed" lines: how long the first list of each kind
// took, and how many objects it stored.
func printListed(logPath string) {
	f, err := os.Open(logPath)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Kind    string `json:"kind"`
			Objects int    `json:"objects"`
			Took    string `json:"took"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listed" {
			fmt.Printf("load:   listed %s: %d objects in %s\n", line.Kind, line.Objects, line.Took)
		}
	}
}
