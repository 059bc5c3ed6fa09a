// Package memlimit gives the Go runtime a soft memory limit below its container's, and a
// garbage collector target that spends the room below it on fewer collections.
//
// The runtime collects harder as its heap nears GOMEMLIMIT instead of growing into the
// kernel's OOM kill. Set to the container's whole limit (a Deployment passing
// limits.memory straight through), it leaves no room for what the soft limit cannot steer:
// memory the runtime does not count, page cache charged to the cgroup, a burst of
// allocation between two collections. So `webhook serve` reads the limit itself and keeps
// a tenth of it in reserve.
package memlimit

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the container's memory limit given to the Go runtime as its soft limit.
const Fraction = 0.9

// unlimitedV1 is the smallest value cgroup v1 reports for "no limit" (the largest int64,
// rounded down to a page); anything above a exbibyte is taken as no limit.
const unlimitedV1 = 1 << 60

// CgroupLimit reads the memory limit of the process's cgroup under root (normally
// /sys/fs/cgroup): cgroup v2's memory.max, else v1's memory/memory.limit_in_bytes. It
// reports false when there is no limit or no cgroup file to read.
func CgroupLimit(root string) (int64, bool) {
	for _, file := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			continue
		}
		value := strings.TrimSpace(string(data))
		if value == "max" {
			return 0, false
		}
		limit, err := strconv.ParseInt(value, 10, 64)
		if err != nil || limit <= 0 || limit >= unlimitedV1 {
			return 0, false
		}
		return limit, true
	}
	return 0, false
}

// Apply sets the runtime's soft memory limit to Fraction of the cgroup's, unless GOMEMLIMIT
// is set (an operator's explicit choice wins) or there is no cgroup limit. It returns the
// limit it set, 0 if none.
func Apply(root string, getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, ok := CgroupLimit(root)
	if !ok {
		return 0
	}
	soft := int64(float64(limit) * Fraction)
	debug.SetMemoryLimit(soft)
	return soft
}

// DefaultGCPercent is the collector's target `webhook serve` sets when GOGC is not set: the
// heap may grow to three times what is live between two collections, not twice. Each
// collection walks the whole snapshot while reviews keep arriving, and the reviews that
// arrive during one make the latency tail, so half as many collections shorten it
// (BENCHMARKS.md: p99 at 4,500 reviews/s 7.8-11.0 -> 6.6-7.9 ms) for more memory (peak RSS
// 90 -> 117-124 MiB with the synthetic snapshot from files, 112 -> 140 MiB serving a cluster
// holding it; 96-99 and 115 MiB once stored policy specs became compact JSON). Near the container's limit the soft limit (Apply) makes the runtime collect as
// often as it must, whatever the target.
const DefaultGCPercent = 200

// ApplyGCPercent sets the collector's target to DefaultGCPercent unless GOGC is set (an
// operator's explicit choice wins). It returns the target it set, 0 if none.
func ApplyGCPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
