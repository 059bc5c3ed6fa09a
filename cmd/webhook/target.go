package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/policyattachment/webhook/pkg/rules/policy"
	"github.com/policyattachment/webhook/pkg/rules/topology"
)

// targetArgs checks the arguments of a command that takes one target, as kubectl takes an
// object: KIND/NAME, KIND NAME or KIND/NAMESPACE/NAME; a wrong one is a wrong command line.
func targetArgs(_ *cobra.Command, args []string) error {
	_, err := targetArg(args)
	return err
}

// targetArg is the target the arguments name, KIND/NAME or KIND/NAMESPACE/NAME ("" for
// none). kubectl's KIND NAME is read as KIND/NAME.
func targetArg(args []string) (string, error) {
	var s string
	switch {
	case len(args) == 0:
		return "", nil
	case len(args) == 1:
		s = args[0]
	case len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/"):
		s = args[0] + "/" + args[1]
	default:
		return "", fmt.Errorf("one target at a time (KIND/NAME), not %q", strings.Join(args, " "))
	}
	// Any namespace tells whether its form is right; runExplain reads it in -n's.
	if _, err := topology.ParseTargetIn(s, "default"); err != nil {
		return "", fmt.Errorf("target %w", err)
	}
	return s, nil
}

// explainTarget is the object whose paths explain narrows to: the arguments' or --target's
// (both may be given if they name the same object), KIND/NAME in namespace(); nil for none.
func explainTarget(args []string, flag string, namespace func() string) (*policy.TargetKey, error) {
	arg, err := targetArg(args)
	if err != nil {
		return nil, err
	}
	if arg == "" && flag == "" {
		return nil, nil
	}
	ns := namespace()
	var fromArg, fromFlag policy.TargetKey
	if arg != "" {
		if fromArg, err = topology.ParseTargetIn(arg, ns); err != nil {
			return nil, fmt.Errorf("target %w", err)
		}
	}
	if flag != "" {
		if fromFlag, err = topology.ParseTargetIn(flag, ns); err != nil {
			return nil, fmt.Errorf("--target: %w", err)
		}
	}
	switch {
	case arg == "":
		return &fromFlag, nil
	case flag != "" && fromFlag != fromArg:
		return nil, fmt.Errorf("two targets, %s and --target %s: give one", fromArg, fromFlag)
	}
	return &fromArg, nil
}
