package workflows

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Every field of the persisted state, set at every depth, reaches the next
// run: the input continue-as-new hands over (nextInput), encoded by
// Temporal's converter and read back by parseInput, holds all of it. A
// field that would not (a json:"-" tag, a value that does not round-trip,
// an unexported field in one of the workflow's own persisted types) fails.
func TestCarriedStateSurvivesContinueAsNew(t *testing.T) {
	var want Carried
	fill(t, reflect.ValueOf(&want).Elem(), "Carried", 0)
	s := &appState{app: testApp(true).Application, Carried: want}

	payload, err := converter.GetDefaultDataConverter().ToPayload(s.nextInput())
	require.NoError(t, err)
	next, err := parseInput(payload.GetData())
	require.NoError(t, err)
	require.NotNil(t, next.Carried)
	require.Equal(t, want, *next.Carried)

	// The running operation goes with the rest when the run continues
	// between two of its retries.
	s.continuing = &operation{target: want.Operation.Target, specDigest: "next"}
	require.Equal(t, "next", s.nextInput().Carried.Operation.SpecDigest)
	require.Equal(t, want.Status, s.nextInput().Carried.Status)
}

// The same for the ApplicationSet workflow: the set's carried state, set at
// every depth, reaches the next run, and so does a waiting refresh.
func TestAppSetCarriedStateSurvivesContinueAsNew(t *testing.T) {
	var want contract.AppSetCarried
	fill(t, reflect.ValueOf(&want).Elem(), "AppSetCarried", 0)
	s := &appSetState{set: *testAppSet(t), AppSetCarried: want, refresh: &refreshReq{}}

	payload, err := converter.GetDefaultDataConverter().ToPayload(s.nextInput())
	require.NoError(t, err)
	_, next, err := parseAppSetInput(payload.GetData())
	require.NoError(t, err)
	require.NotNil(t, next)
	require.Equal(t, want, *next)

	s.refresh = nil
	require.False(t, s.nextInput().Carried.Refresh, "no refresh waits")
}

// The state as the code before the one struct wrote it: a run continued as
// new by an older worker still starts from it, and an unset notification
// state is left out as it was.
func TestCarriedStateReadsOlderRuns(t *testing.T) {
	old := `{"status":{"sync":{"status":"Synced"},"health":{"status":"Healthy"}},"operationSeq":3,` +
		`"searchUpserted":{},"childApps":["a"],"owner":{"parent":"root"},"notifications":{"notified":[{"key":"k"}],"seq":2}}`
	var c Carried
	require.NoError(t, json.Unmarshal([]byte(old), &c))
	require.Equal(t, int64(3), c.OperationSeq)
	require.Equal(t, "root", c.Owner.Parent)
	require.Equal(t, int64(2), c.Notifications.Seq)
	require.Len(t, c.Notifications.Notified, 1)

	data, err := json.Marshal(Carried{OperationSeq: 1})
	require.NoError(t, err)
	require.NotContains(t, string(data), "notifications")
}

// fill sets every settable field under v to a value that is not its zero,
// from path (for the messages); depth bounds recursive types.
func fill(t *testing.T, v reflect.Value, path string, depth int) {
	t.Helper()
	if depth > 8 {
		return
	}
	seed := len(path) + depth + 1
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path, depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, seed, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				require.NotContains(t, []string{reflect.TypeOf(Carried{}).PkgPath(), reflect.TypeOf(contract.AppSetCarried{}).PkgPath()}, v.Type().PkgPath(),
					"%s.%s is unexported: it would not reach the next run; put per-run state in perRun", path, f.Name)
				continue
			}
			if v.Type() == reflect.TypeOf(app.Spec{}) && f.Name == "Source" {
				continue // a multi-source spec (Sources is set) writes no Source
			}
			fill(t, v.Field(i), path+"."+f.Name, depth+1)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), path+"[0]", depth+1)
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		fill(t, k, path+"{key}", depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(t, e, path+"{}", depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", path, seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(seed))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed))
	case reflect.Interface:
		// Left nil: what an interface holds is not the state's to choose.
	default:
		t.Fatalf("%s: cannot fill a %s", path, v.Kind())
	}
}
