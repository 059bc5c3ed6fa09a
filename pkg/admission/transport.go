package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/policyattachment/webhook/internal/exactjson"
	"github.com/policyattachment/webhook/internal/reviewlog"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// MaxReviewBytes bounds a review body (controller-runtime's limit too): a hostile body
// costs at most this much memory.
const MaxReviewBytes = 7 << 20

// supportedReviewVersions are the AdmissionReview versions this webhook answers; v1beta1
// has the same shape and is answered in its own version.
var supportedReviewVersions = map[string]bool{"admission.k8s.io/v1": true, "admission.k8s.io/v1beta1": true}

// reviewHandler is the HTTP door of one admission path. It reads the body once, bounded,
// decodes the AdmissionReview in one pass (the object stays raw JSON for the handler to
// decode once), calls h through the metrics, and writes the answer in the review's
// version. controller-runtime's generic admission.Webhook decoded every body twice (once to
// sniff the type) and built a logger per request: a third of the CPU of a review.
func reviewHandler(name string, h admission.Handler) http.Handler {
	return boundedReviewHandler(name, h, Limits{})
}

// boundedReviewHandler is reviewHandler within limits.
func boundedReviewHandler(name string, h admission.Handler, limits Limits) http.Handler {
	if limits.BodyTimeout <= 0 {
		limits.BodyTimeout = DefaultBodyTimeout
	}
	return &reviewDoor{name: name, handler: instrument(name, h), limits: limits}
}

type reviewDoor struct {
	name    string
	handler admission.Handler
	limits  Limits
}

// admissionReview is the wire form of an AdmissionReview, v1 or v1beta1.
type admissionReview struct {
	APIVersion string                         `json:"apiVersion,omitempty"`
	Kind       string                         `json:"kind,omitempty"`
	Request    *reviewRequest                 `json:"request,omitempty"`
	Response   *admissionv1.AdmissionResponse `json:"response,omitempty"`
}

// reviewRequest holds the fields of an AdmissionRequest the handlers read. The object is
// decoded straight into generic JSON in the same pass as the review, instead of being
// copied out raw and parsed again; what no handler reads (options, requestKind, the object's
// status and managedFields) is skipped without being built, and userInfo, which only a
// denial's log line and the skip label's guard read, is kept undecoded (requestUser).
type reviewRequest struct {
	UID       types.UID                   `json:"uid"`
	Kind      metav1.GroupVersionKind     `json:"kind"`
	Resource  metav1.GroupVersionResource `json:"resource"`
	Name      string                      `json:"name,omitempty"`
	Namespace string                      `json:"namespace,omitempty"`
	Operation admissionv1.Operation       `json:"operation"`
	Object    *reviewObject               `json:"object,omitempty"`
	OldObject bodyView                    `json:"oldObject,omitempty"`
	UserInfo  bodyView                    `json:"userInfo,omitempty"`
	DryRun    *bool                       `json:"dryRun,omitempty"`
}

// bodyView is a JSON value left undecoded, as a view into the request body rather than a
// copy: only a DELETE reads the old object, and every UPDATE carries one (1.2 of the 17 KiB
// a validating review of a kubectl-applied policy allocated). The view is valid while the
// body's buffer is, that is until ServeHTTP returns; the handlers read it during the review
// only. TestDeletionThroughTheDoorReadsTheOldObject fails if a JSON implementation ever
// hands over a buffer it reuses.
type bodyView []byte

// UnmarshalJSON keeps data itself (encoding/json hands over a slice of the input); null
// leaves the view empty, as for a RawExtension.
func (v *bodyView) UnmarshalJSON(data []byte) error {
	if string(data) != "null" {
		*v = data
	}
	return nil
}

// admissionRequest converts to the handlers' type; the decoded object travels as an
// Unstructured in Object.Object (see objectOf).
func (r *reviewRequest) admissionRequest() admission.Request {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: r.UID, Kind: r.Kind, Resource: r.Resource, Name: r.Name, Namespace: r.Namespace,
		Operation: r.Operation, OldObject: runtime.RawExtension{Raw: r.OldObject}, DryRun: r.DryRun,
	}}
	if r.Object != nil {
		req.Object = runtime.RawExtension{Object: &unstructured.Unstructured{Object: r.Object.generic()}}
	}
	return req
}

// reviewObject is the object of a review as the handlers read it: apiVersion, kind, metadata
// and spec, each as generic JSON, decoded in the review's one pass. What no handler reads is
// skipped by the decoder without being built: status, and metadata.managedFields, which the
// API server sends with every object (a kubectl-applied policy's managedFields were 45 of the
// 180 allocations of a review).
type reviewObject struct {
	APIVersion any             `json:"apiVersion"`
	Kind       any             `json:"kind"`
	Metadata   *reviewMetadata `json:"metadata"`
	Spec       any             `json:"spec"`
}

// reviewMetadata is ObjectMeta, the only fields the API server keeps in an object's
// metadata, each as generic JSON, without managedFields.
type reviewMetadata struct {
	Name                       any `json:"name"`
	GenerateName               any `json:"generateName"`
	Namespace                  any `json:"namespace"`
	SelfLink                   any `json:"selfLink"`
	UID                        any `json:"uid"`
	ResourceVersion            any `json:"resourceVersion"`
	Generation                 any `json:"generation"`
	CreationTimestamp          any `json:"creationTimestamp"`
	DeletionTimestamp          any `json:"deletionTimestamp"`
	DeletionGracePeriodSeconds any `json:"deletionGracePeriodSeconds"`
	Labels                     any `json:"labels"`
	Annotations                any `json:"annotations"`
	OwnerReferences            any `json:"ownerReferences"`
	Finalizers                 any `json:"finalizers"`
}

// generic returns the object as the map the handlers read; a field that was absent or null
// is left out, which the handlers' type assertions cannot tell apart.
func (o *reviewObject) generic() map[string]any {
	out := make(map[string]any, 4)
	putPresent(out, "apiVersion", o.APIVersion)
	putPresent(out, "kind", o.Kind)
	putPresent(out, "spec", o.Spec)
	if m := o.Metadata; m != nil {
		meta := make(map[string]any, 8)
		putPresent(meta, "name", m.Name)
		putPresent(meta, "generateName", m.GenerateName)
		putPresent(meta, "namespace", m.Namespace)
		putPresent(meta, "selfLink", m.SelfLink)
		putPresent(meta, "uid", m.UID)
		putPresent(meta, "resourceVersion", m.ResourceVersion)
		putPresent(meta, "generation", m.Generation)
		putPresent(meta, "creationTimestamp", m.CreationTimestamp)
		putPresent(meta, "deletionTimestamp", m.DeletionTimestamp)
		putPresent(meta, "deletionGracePeriodSeconds", m.DeletionGracePeriodSeconds)
		putPresent(meta, "labels", m.Labels)
		putPresent(meta, "annotations", m.Annotations)
		putPresent(meta, "ownerReferences", m.OwnerReferences)
		putPresent(meta, "finalizers", m.Finalizers)
		out["metadata"] = meta
	}
	return out
}

func putPresent(m map[string]any, key string, v any) {
	if v != nil {
		m[key] = v
	}
}

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (d *reviewDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 { // keep ordinary buffers, let a huge one go
			bufferPool.Put(buf)
		}
	}()
	if contentType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); contentType != "application/json" {
		writeReviewError(w, "", http.StatusBadRequest, fmt.Sprintf("contentType=%s, expected application/json", r.Header.Get("Content-Type")))
		return
	}
	if r.Body == nil {
		writeReviewError(w, "", http.StatusBadRequest, "request body is empty")
		return
	}
	if r.ContentLength > MaxReviewBytes {
		d.refuse(w, "size", http.StatusRequestEntityTooLarge, fmt.Sprintf("request entity is too large; limit is %d bytes", MaxReviewBytes))
		return
	}
	body := &chargedReader{r: r.Body, limit: MaxReviewBytes + 1, budget: d.limits.Memory}
	defer body.release() // once the review is answered, nothing of the body is held
	conn := readDeadliner(w)
	if conn != nil {
		_ = conn.SetReadDeadline(time.Now().Add(d.limits.BodyTimeout))
	}
	_, err := buf.ReadFrom(body)
	if conn != nil && err != nil {
		// The server reads what is left of a body before it closes the connection; a body
		// refused unread is not waited for.
		_ = conn.SetReadDeadline(time.Now())
	} else if conn != nil {
		_ = conn.SetReadDeadline(time.Time{})
	}
	switch {
	case errors.Is(err, errOverBudget):
		d.refuse(w, "memory", http.StatusTooManyRequests, overBudgetMessage(d.limits.Memory))
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		d.refuse(w, "body_timeout", http.StatusRequestTimeout, fmt.Sprintf("the review's body did not arrive within %s (--review-body-timeout); the API server sends it at once", d.limits.BodyTimeout))
		return
	case err != nil:
		writeReviewError(w, "", http.StatusBadRequest, fmt.Sprintf("reading the review: %v", err))
		return
	}
	if buf.Len() > MaxReviewBytes {
		d.refuse(w, "size", http.StatusRequestEntityTooLarge, fmt.Sprintf("request entity is too large; limit is %d bytes", MaxReviewBytes))
		return
	}
	if buf.Len() == 0 {
		writeReviewError(w, "", http.StatusBadRequest, "request body is empty")
		return
	}
	var in admissionReview
	if err := jsonv2.Unmarshal(buf.Bytes(), &in, reviewDecoding); err != nil {
		writeReviewError(w, "", http.StatusBadRequest, "decoding the AdmissionReview: "+describeDecodeError(err))
		return
	}
	if in.Kind != "AdmissionReview" {
		writeReviewError(w, "", http.StatusBadRequest, fmt.Sprintf("expected kind AdmissionReview, not %q", in.Kind))
		return
	}
	if !supportedReviewVersions[in.APIVersion] {
		writeReviewError(w, "", http.StatusBadRequest, fmt.Sprintf("unsupported AdmissionReview apiVersion %q; supported: admission.k8s.io/v1, admission.k8s.io/v1beta1", in.APIVersion))
		return
	}
	req := admission.Request{}
	ctx := r.Context()
	if d.limits.ClaimRate != nil {
		ctx = withCaller(ctx, r.RemoteAddr)
	}
	if in.Request != nil {
		req = in.Request.admissionRequest()
		ctx = reviewlog.Into(ctx, in.Request) // a pointer: nothing copied
	}
	resp := d.handle(ctx, req)
	writeReview(w, admissionReview{APIVersion: in.APIVersion, Kind: "AdmissionReview", Response: &resp.AdmissionResponse})
}

// refuse answers a review refused at one of the door's bounds, unread (or not read to its
// end), and closes the connection: what is left of the body is never read, so the
// connection cannot carry another review.
func (d *reviewDoor) refuse(w http.ResponseWriter, bound string, code int32, message string) {
	reviewsRefused.WithLabelValues(d.name, bound).Inc()
	w.Header().Set("Connection", "close")
	writeReviewError(w, "", code, message)
}

// reviewDecoding is how review bodies are read (encoding/json/v2's semantics, from its mirror
// module until Go 1.27 ships the package): field names match exactly, a name given twice in
// one object is refused (the API server never sends one, and a decoder that kept either copy
// could judge another object than the API server stores), and invalid UTF-8 in a string reads
// as U+FFFD, as the API server itself reads it, so a malformed name is denied by the rule that
// checks names rather than refused unread. Numbers read as the API server keeps them
// (exactjson): an integer an int64 holds stays exact, where a float64 would round it beyond 2^53.
var reviewDecoding = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), exactjson.Numbers)

// describeDecodeError says what is wrong with a review body in JSON's terms: where a field has
// the wrong JSON type, which field and what it must be, not the Go types the review is
// decoded into.
func describeDecodeError(err error) string {
	var semantic *jsonv2.SemanticError
	if !errors.As(err, &semantic) || semantic.GoType == nil || semantic.JSONKind == 0 || semantic.JSONPointer == "" {
		return strings.TrimPrefix(err.Error(), "jsontext: ")
	}
	// The review's typed fields hold no lists (what is a list is decoded as generic JSON, which
	// takes any type), so the pointer's tokens are all field names.
	field := strings.Join(slices.Collect(semantic.JSONPointer.Tokens()), ".")
	return fmt.Sprintf("%s must be a JSON %s, not %s", field, jsonTypeOf(semantic.GoType), jsonKindOf(semantic.JSONKind))
}

// jsonTypeOf names the JSON type a Go type decodes from.
func jsonTypeOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Interface:
		return "value"
	}
	return "number"
}

// jsonKindOf names a JSON value's kind with its article: "a string", "an object".
func jsonKindOf(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a " + k.String()
}

// handle calls the handler; a panic is answered as a refusal (and counted), never allowed.
func (d *reviewDoor) handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	defer func() {
		if p := recover(); p != nil {
			handlerPanics.WithLabelValues(d.name).Inc()
			reviewlog.Logger(ctx).Error(fmt.Errorf("%v", p), "review handler panicked", "webhook", d.name,
				"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name)
			resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("panic: %v [recovered]", p))
			resp.UID = req.UID
		}
	}()
	resp = d.handler.Handle(ctx, req)
	if err := resp.Complete(req); err != nil {
		resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("encoding the response: %w", err))
		resp.UID = req.UID
	}
	return resp
}

// ReviewUID is the review's UID (reviewlog.Review).
func (r *reviewRequest) ReviewUID() types.UID { return r.UID }

// requestUser is who asked for the write: the request's UserInfo when it is set (a handler
// called directly), otherwise the review's userInfo, decoded now. Only denials and the skip
// label's guard ask, so a clean review never decodes it.
func requestUser(ctx context.Context, req admission.Request) authenticationv1.UserInfo {
	if req.UserInfo.Username != "" {
		return req.UserInfo
	}
	var u authenticationv1.UserInfo
	if r, ok := reviewlog.From(ctx); ok {
		if rr, ok := r.(*reviewRequest); ok && len(rr.UserInfo) > 0 {
			_ = json.Unmarshal(rr.UserInfo, &u) // the API server sends a well-formed one; a broken one names nobody
		}
	}
	return u
}

// writeReviewError answers with an AdmissionReview refusing the request.
func writeReviewError(w http.ResponseWriter, apiVersion string, code int32, message string) {
	if apiVersion == "" {
		apiVersion = "admission.k8s.io/v1"
	}
	writeReview(w, admissionReview{APIVersion: apiVersion, Kind: "AdmissionReview", Response: &admissionv1.AdmissionResponse{
		Allowed: false, Result: &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: message},
	}})
}

func writeReview(w http.ResponseWriter, out admissionReview) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out) // the client went away; nothing left to tell it
}
