package notify

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestAppObjectKeepsTheOperationsInfo: a template reads the info of
// ferry app sync --info where Argo CD's keeps it, beside the operation's
// sync.revision.
func TestAppObjectKeepsTheOperationsInfo(t *testing.T) {
	st := app.Status{OperationState: &app.OperationState{ID: "1", Revision: "abc123", Phase: app.OperationSucceeded,
		Operation: &app.Operation{Info: []app.Info{{Name: "ticket", Value: "OPS-7"}}}}}
	raw, err := AppObject(app.Application{}, st)
	require.NoError(t, err)
	var obj struct {
		Status struct {
			OperationState struct {
				Operation struct {
					Info []app.Info `json:"info"`
					Sync struct {
						Revision string `json:"revision"`
					} `json:"sync"`
				} `json:"operation"`
			} `json:"operationState"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(raw, &obj))
	op := obj.Status.OperationState.Operation
	require.Equal(t, []app.Info{{Name: "ticket", Value: "OPS-7"}}, op.Info)
	require.Equal(t, "abc123", op.Sync.Revision)
}
