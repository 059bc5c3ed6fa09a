package admission

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// invalidStatus is apierrors.NewInvalid(kind, name, errs).Status(), the 422 a denial answers
// with, built with each cause's text formatted once. NewInvalid formats every cause three
// times (once for its cause, twice more through ToAggregate and the aggregate's Error) and
// that was a tenth of what the webhook allocated under load. The message is the one kubectl
// prints, so TestInvalidStatusIsNewInvalids holds this to the upstream function cause for
// cause and byte for byte.
func invalidStatus(kind schema.GroupKind, name string, errs field.ErrorList) metav1.Status {
	causes := make([]metav1.StatusCause, 0, len(errs))
	// messages are the distinct `field: detail` texts in order: the aggregate drops repeats.
	messages := make([]string, 0, len(errs))
	for _, err := range errs {
		body := err.ErrorBody()
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseType(err.Type), Message: body, Field: err.Field})
		// field.Error.Error is exactly "<field>: <body>".
		if message := err.Field + ": " + body; !slices.Contains(messages, message) {
			messages = append(messages, message)
		}
	}
	message := kind.String() + " " + strconv.Quote(name) + " is invalid"
	switch len(messages) {
	case 0:
	case 1:
		message += ": " + messages[0]
	default:
		message += ": [" + strings.Join(messages, ", ") + "]"
	}
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Message: message,
		Details: &metav1.StatusDetails{Group: kind.Group, Kind: kind.Kind, Name: name, Causes: causes},
	}
}
