package reviewlog

import (
	"context"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

type review types.UID

func (r review) ReviewUID() types.UID { return types.UID(r) }

func TestLoggerNamesTheReview(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := logf.IntoContext(context.Background(), log)

	Logger(ctx).Info("outside a review")
	Logger(Into(ctx, review("705ab4f5"))).Info("live read failed", "kind", "ColorPolicy")
	assert.Equal(t, []string{
		`"level"=0 "msg"="outside a review"`,
		`"level"=0 "msg"="live read failed" "uid"="705ab4f5" "kind"="ColorPolicy"`,
	}, lines)
}
