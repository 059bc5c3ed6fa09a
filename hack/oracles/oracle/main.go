// Command oracle compares the webhook's verdicts and impact statuses with Envoy Gateway's
// own translator on generated scenarios (`make oracle`; hack/oracles/internal/oracle says how).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"

	"github.com/policyattachment/webhook/hack/oracles/internal/oracle"
)

func main() {
	egctl := flag.String("egctl", "", "egctl built by hack/oracles/egctl.sh (required)")
	version := flag.String("version", "", "the Envoy Gateway version egctl was built from, for the report")
	seed := flag.Uint64("seed", 1, "generator seed: a seed and a count give the same scenarios on every run")
	n := flag.Int("n", 1000, "scenarios to judge")
	workers := flag.Int("j", 2, "scenarios judged at once")
	examples := flag.String("examples", "", "folder to write one example manifest per class of disagreement into")
	maxFalseDenials := flag.Int("max-false-denials", -1, "exit 1 when there are more false denials than this (-1: never)")
	minVerdicts := flag.Float64("min-verdict-agreement", 0, "exit 1 when fewer verdicts agree than this fraction")
	minStatuses := flag.Float64("min-status-agreement", 0, "exit 1 when fewer statuses agree than this fraction")
	flag.Parse()
	if *egctl == "" {
		fmt.Fprintln(os.Stderr, "oracle: -egctl is required (make oracle builds it with hack/oracles/egctl.sh)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	t := &oracle.Translator{Egctl: *egctl}
	outcomes := make([]*oracle.Outcome, *n)
	errs := make([]error, *n)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(1, *workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outcomes[i], errs[i] = oracle.Judge(ctx, t, oracle.Generate(*seed, i))
				mu.Lock()
				done++
				if done%50 == 0 || done == *n {
					fmt.Fprintf(os.Stderr, "judged %d of %d scenarios\n", done, *n)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range *n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "oracle: interrupted")
		os.Exit(130)
	}

	report := oracle.NewReport()
	for i, o := range outcomes {
		if errs[i] != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", errs[i])
			os.Exit(2)
		}
		report.Add(o)
	}
	fmt.Printf("seed %d: ", *seed)
	report.Write(os.Stdout, *version)
	if *examples != "" {
		if err := report.WriteExamples(*examples); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(2)
		}
		fmt.Printf("examples of each disagreement in %s\n", *examples)
	}
	if failed := report.Check(*maxFalseDenials, *minVerdicts, *minStatuses); failed != "" {
		fmt.Fprintf(os.Stderr, "oracle: %s\n", failed)
		os.Exit(1)
	}
}
