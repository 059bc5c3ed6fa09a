// Package memlimit gives the Go runtime a soft memory limit below its container's, and a
// garbage collector target that spends the room below it on fewer collections.
//
// The runtime collects harder as its heap nears GOMEMLIMIT instead of growing into the
// kernel's OOM kill. Set to the container's whole limit (a Deployment passing
// limits.memory straight through), it leaves no room for what the soft limit cannot steer:
// memory the runtime does not count, page cache charged to the cgroup, a burst of
// allocation between two collections. So `webhook serve` reads the limit (through
// automemlimit, which finds the process's cgroup as the kernel reports it) and keeps a tenth
// of it in reserve.
package memlimit

import (
	"math"
	"runtime/debug"
)

// Fraction of the container's memory limit given to the Go runtime as its soft limit.
const Fraction = 0.9

// Limit is where the container's memory limit comes from: automemlimit's FromCgroup in
// `webhook serve` (cgroup v2 or v1, the process's own cgroup whether or not it has a cgroup
// namespace), which reports an error when there is no limit or no cgroup.
type Limit func() (uint64, error)

// Apply sets the runtime's soft memory limit to Fraction of limit's, unless GOMEMLIMIT is set
// (an operator's explicit choice wins) or there is no limit. It returns the limit it set, 0
// if none.
func Apply(limit Limit, getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	bytes, err := limit()
	if err != nil || bytes == 0 || bytes > math.MaxInt64 {
		return 0
	}
	soft := int64(float64(bytes) * Fraction)
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

// SyncGCPercent is the collector's target while the first lists are read, before
// DefaultGCPercent takes over. Reading a cluster decodes every object once, a garbage many
// times what is kept, allocated in between what is kept: with three times the live heap
// between collections, what is kept ends up spread thinly over memory the runtime cannot
// give back (ten times the synthetic cluster: 183 MiB live in 425 MiB of spans, 486 MiB
// resident once ready; at this target 310 MiB of spans, 367 MiB resident, ready as soon).
const SyncGCPercent = 100

// ApplyGCPercent sets the collector's target to SyncGCPercent unless GOGC is set (an
// operator's explicit choice wins), and returns the function that sets DefaultGCPercent
// once synced (nil if GOGC is set).
func ApplyGCPercent(getenv func(string) string) (synced func()) {
	if getenv("GOGC") != "" {
		return nil
	}
	debug.SetGCPercent(SyncGCPercent)
	return func() { debug.SetGCPercent(DefaultGCPercent) }
}
