package memlimit

import (
	"errors"
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	limit := func(bytes uint64, err error) Limit { return func() (uint64, error) { return bytes, err } }

	noEnv := func(string) string { return "" }
	assert.Equal(t, int64(241591910), Apply(limit(268435456, nil), noEnv), "nine tenths of 256 MiB")
	assert.Equal(t, int64(241591910), debug.SetMemoryLimit(-1))

	debug.SetMemoryLimit(math.MaxInt64)
	explicit := func(key string) string {
		if key == "GOMEMLIMIT" {
			return "100MiB"
		}
		return ""
	}
	assert.Equal(t, int64(0), Apply(limit(268435456, nil), explicit), "GOMEMLIMIT, when set, is the operator's choice")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))

	assert.Equal(t, int64(0), Apply(limit(0, errors.New("no limit")), noEnv), "no limit: nothing set")
	assert.Equal(t, int64(0), Apply(limit(math.MaxUint64, nil), noEnv), "a limit no int64 holds is none")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}

func TestApplyGCPercent(t *testing.T) {
	before := debug.SetGCPercent(50)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	synced := ApplyGCPercent(func(string) string { return "" })
	require.NotNil(t, synced)
	assert.Equal(t, SyncGCPercent, debug.SetGCPercent(SyncGCPercent), "the runtime's target while the first lists are read")
	synced()
	assert.Equal(t, DefaultGCPercent, debug.SetGCPercent(50), "and once synced")

	explicit := func(key string) string {
		if key == "GOGC" {
			return "50"
		}
		return ""
	}
	assert.Nil(t, ApplyGCPercent(explicit), "GOGC, when set, is the operator's choice")
	assert.Equal(t, 50, debug.SetGCPercent(50), "and the runtime's target is left alone")
}
