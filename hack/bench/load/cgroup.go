package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// memoryCgroup is the cgroup (v1 memory controller) -memory-limit runs the webhook in.
const memoryCgroup = "/sys/fs/cgroup/memory/policyattachment-load"

// inMemoryCgroup returns a command that runs bin in a memory cgroup limited to mib MiB, as a
// container's limit would: the process joins it before exec, so `webhook serve` finds the
// limit at start-up as it does in a Pod. Needs root and the v1 memory controller.
func inMemoryCgroup(mib, bin string, args []string) (*exec.Cmd, error) {
	n, err := strconv.Atoi(mib)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("-memory-limit %q: want a number of MiB", mib)
	}
	if err := os.MkdirAll(memoryCgroup, 0o755); err != nil {
		return nil, fmt.Errorf("-memory-limit: %w (needs root and the cgroup v1 memory controller)", err)
	}
	if err := os.WriteFile(filepath.Join(memoryCgroup, "memory.limit_in_bytes"), []byte(strconv.Itoa(n<<20)), 0o644); err != nil {
		return nil, fmt.Errorf("-memory-limit: %w", err)
	}
	// The shell writes its own pid, then becomes the webhook.
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	return exec.Command("sh", append([]string{"-c", script, memoryCgroup, bin}, args...)...), nil
}
