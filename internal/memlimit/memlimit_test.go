package memlimit

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/policyattachment/webhook/internal/testkit"
)

func TestCgroupLimit(t *testing.T) {
	cases := map[string]struct {
		files     map[string]string
		wantLimit int64
		wantOK    bool
	}{
		"cgroup v2 with a limit":      {files: map[string]string{"memory.max": "268435456\n"}, wantLimit: 268435456, wantOK: true},
		"cgroup v2 without a limit":   {files: map[string]string{"memory.max": "max\n"}},
		"cgroup v1 with a limit":      {files: map[string]string{"memory/memory.limit_in_bytes": "134217728\n"}, wantLimit: 134217728, wantOK: true},
		"cgroup v1 without a limit":   {files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}},
		"no cgroup files":             {},
		"a value that is not numeric": {files: map[string]string{"memory.max": "lots\n"}},
		"v2 is read before v1": {files: map[string]string{
			"memory.max": "268435456", "memory/memory.limit_in_bytes": "134217728",
		}, wantLimit: 268435456, wantOK: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			limit, ok := CgroupLimit(testkit.WriteFiles(t, tc.files))
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.wantLimit, limit)
		})
	}
}

func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	root := testkit.WriteFiles(t, map[string]string{"memory.max": "268435456"})

	noEnv := func(string) string { return "" }
	assert.Equal(t, int64(241591910), Apply(root, noEnv), "nine tenths of 256 MiB")
	assert.Equal(t, int64(241591910), debug.SetMemoryLimit(-1))

	debug.SetMemoryLimit(math.MaxInt64)
	explicit := func(key string) string {
		if key == "GOMEMLIMIT" {
			return "100MiB"
		}
		return ""
	}
	assert.Equal(t, int64(0), Apply(root, explicit), "GOMEMLIMIT, when set, is the operator's choice")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))

	assert.Equal(t, int64(0), Apply(testkit.WriteFiles(t, map[string]string{"memory.max": "max"}), noEnv))
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}

func TestApplyGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	assert.Equal(t, DefaultGCPercent, ApplyGCPercent(func(string) string { return "" }))
	assert.Equal(t, DefaultGCPercent, debug.SetGCPercent(100), "the runtime's target is set")

	explicit := func(key string) string {
		if key == "GOGC" {
			return "50"
		}
		return ""
	}
	assert.Equal(t, 0, ApplyGCPercent(explicit), "GOGC, when set, is the operator's choice")
	assert.Equal(t, 100, debug.SetGCPercent(100), "and the runtime's target is left alone")
}
