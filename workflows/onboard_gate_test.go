package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
)

// gateEnv runs the gate; gone lists apps whose go signal fails (gone), and
// the go signals sent are recorded in order.
func gateEnv(t *testing.T, gone ...string) (*testsuite.TestWorkflowEnvironment, *[]string) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).OnboardGate, workflow.RegisterOptions{Name: contract.OnboardGateWorkflow})
	var sent []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalOnboardGo, mock.Anything).Return(
		func(_, app, _, _ string, _ any) error {
			for _, g := range gone {
				if g == app {
					return errors.New("workflow not found")
				}
			}
			sent = append(sent, app)
			return nil
		})
	return env, &sent
}

func gateView(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.OnboardGateView {
	t.Helper()
	v, err := env.QueryWorkflow(contract.QueryStatus)
	require.NoError(t, err)
	var view contract.OnboardGateView
	require.NoError(t, v.Get(&view))
	return view
}

func signalAt(env *testsuite.TestWorkflowEnvironment, at time.Duration, name string, req contract.OnboardRequest) {
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(name, req) }, at)
}

// TestOnboardGateLetsAppsInInOrder: two places; the third app waits until
// one is done, then comes in; an app asking twice is queued once, and one
// that leaves the queue is not let in.
func TestOnboardGateLetsAppsInInOrder(t *testing.T) {
	env, sent := gateEnv(t)
	for _, app := range []string{"app/a", "app/b", "app/c", "app/b", "app/d", "app/e"} {
		signalAt(env, time.Second, contract.SignalOnboardWant, contract.OnboardRequest{App: app, Capacity: 2})
	}
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/a", "app/b"}, *sent, "two places")
		require.Equal(t, contract.OnboardGateView{Capacity: 2, Admitted: 2, Queued: 3}, gateView(t, env))
	}, 2*time.Second)
	signalAt(env, 3*time.Second, contract.SignalOnboardDone, contract.OnboardRequest{App: "app/d"}) // leaves the queue
	signalAt(env, 4*time.Second, contract.SignalOnboardDone, contract.OnboardRequest{App: "app/a"})
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/a", "app/b", "app/c"}, *sent, "c comes in as a is done")
	}, 5*time.Second)
	signalAt(env, 6*time.Second, contract.SignalOnboardDone, contract.OnboardRequest{App: "app/b"})
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/a", "app/b", "app/c", "app/e"}, *sent, "d left the queue: e is next")
		env.CancelWorkflow()
	}, 7*time.Second)
	env.ExecuteWorkflow(contract.OnboardGateWorkflow, contract.OnboardGateState{})
	require.True(t, env.IsWorkflowCompleted())
}

// TestOnboardGateFreesLostPlaces: a place whose app is gone (its signal
// fails) or never says it is done (its lease ends) goes to the next app.
func TestOnboardGateFreesLostPlaces(t *testing.T) {
	env, sent := gateEnv(t, "app/gone")
	for _, app := range []string{"app/gone", "app/silent", "app/next", "app/last"} {
		signalAt(env, time.Second, contract.SignalOnboardWant, contract.OnboardRequest{App: app, Capacity: 1})
	}
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/silent"}, *sent, "the gone app's place went to the next at once")
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/silent"}, *sent, "within its lease")
	}, onboardLease-time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/silent", "app/next"}, *sent, "after its lease")
		env.CancelWorkflow()
	}, onboardLease+time.Minute)
	env.ExecuteWorkflow(contract.OnboardGateWorkflow, contract.OnboardGateState{})
	require.True(t, env.IsWorkflowCompleted())
}

// TestOnboardGateCarriesItsState: continued as new, the gate keeps who is
// in and who waits, lets the first waiting app in without a signal, and
// keeps a capacity and queue that signals change.
func TestOnboardGateCarriesItsState(t *testing.T) {
	env, sent := gateEnv(t)
	start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"app/next"}, *sent, "the carried queue's first app, at once")
		env.CancelWorkflow()
	}, time.Second)
	env.ExecuteWorkflow(contract.OnboardGateWorkflow, contract.OnboardGateState{Capacity: 2,
		Admitted: map[string]time.Time{"app/in": start}, Queue: []string{"app/next", "app/later"}})
	require.True(t, env.IsWorkflowCompleted())

	g := &onboardGate{OnboardGateState: contract.OnboardGateState{Capacity: 1, Admitted: map[string]time.Time{"app/a": time.Unix(0, 0)}}}
	g.want(contract.OnboardRequest{App: "app/b", Capacity: 3})
	g.want(contract.OnboardRequest{App: "app/a"})
	require.Equal(t, 3, g.Capacity, "the last asker's capacity")
	require.Equal(t, []string{"app/b"}, g.Queue, "an admitted app is not queued again")
	g.done("app/b")
	require.Empty(t, g.Queue)
}
