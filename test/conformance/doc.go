// Package conformance turns Gateway API's own conformance tests into a corpus of route
// attachment facts, and checks the webhook's route attachment (pkg/rules/topology) against
// it.
//
// The conformance suite is a Go module (sigs.k8s.io/gateway-api/conformance) released with
// Gateway API. Each test is a Go value (suite.ConformanceTest) that names its manifests
// (tests/*.yaml, applied over base/manifests.yaml) and asserts, through the helpers of
// conformance/utils/kubernetes, which parents accept which routes (the Accepted condition and
// its reason), how many routes each listener has attached, and which ListenerSets a Gateway
// accepts. Extract reads those assertions from the tests' source with go/parser and a small
// interpreter of the test bodies (constants, locals, composite literals, the tests' own
// helper functions and closures, loops over known lists), never by hand transcription. What
// cannot be read that way (an assertion under a condition decided at run time, or after the
// test changes the objects) is listed as unread, with why.
//
// Judge builds each test's state from the manifests the suite applies for it (base
// manifests first, the way `webhook check` reads manifests) and compares every fact with
// pkg/rules/topology's answer (RouteAttachments, AttachedRoutes, AcceptedListenerSets). A
// fact attachment does not decide (a route or ListenerSet not Accepted for another reason,
// such as conflicting listeners) is reported as not judged.
//
// The module is read from the module cache at the version go.mod requires for
// sigs.k8s.io/gateway-api (kindsdrift.ModuleDir downloads it once); it is never added to
// go.mod, and no manifest or code of it is copied into the repository: the committed corpus
// (testdata/conformance/expectations.yaml, written by `make conformance-corpus`) holds only
// the facts, and the test reads the manifests from the module when it runs.
package conformance
