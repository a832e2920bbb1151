package workflows

import (
	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// newAppInput is a new app's input in the state that Apply's spec update
// leaves it in: status Unknown, owned by by, a cached refresh requested. It goes
// in Carried, which every worker that runs Application reads (an input
// field of its own would be refused as unknown by a worker older than the
// client); the run starts exactly as one started by Apply continues after
// its first update.
func NewAppInput(a *app.Application, by contract.SpecRequest) Input {
	owner := by.Owner()
	var st app.Status
	st.Sync.Status, st.Health.Status = app.SyncStatusUnknown, app.HealthUnknown
	return Input{Application: *a, Owner: &owner, Carried: &Carried{Status: st, Refresh: &refreshReq{DriftOnly: true}, Owner: &owner}}
}
