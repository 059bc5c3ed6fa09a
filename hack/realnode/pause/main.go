// Command pause is the sandbox process of the real node's Pods (containerd's sandbox_image):
// it holds the Pod's namespaces and does nothing until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	// Children the kernel hands to PID 1 are reaped, so none lingers as a zombie.
	signal.Ignore(syscall.SIGCHLD)
	<-stop
}
