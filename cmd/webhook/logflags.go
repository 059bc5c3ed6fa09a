package main

import (
	goflag "flag"
	"io"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logFlags are controller-runtime's zap flags, as kubebuilder projects take them:
// --zap-log-level (info, error, or a number for more detail), --zap-encoder (json,
// console), --zap-stacktrace-level, --zap-time-encoding, --zap-devel.
type logFlags struct {
	opts zap.Options
}

func (l *logFlags) register(fs *pflag.FlagSet) {
	gfs := goflag.NewFlagSet("log", goflag.ContinueOnError)
	l.opts.BindFlags(gfs)
	fs.AddGoFlagSet(gfs)
}

// logger writes JSON lines (unless --zap-encoder=console) to w.
func (l *logFlags) logger(w io.Writer) logr.Logger {
	return zap.New(zap.UseFlagOptions(&l.opts), zap.WriteTo(w))
}
