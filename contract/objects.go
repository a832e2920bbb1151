package contract

// The contract between an app that an Application object of the control
// cluster owns (Owner.Object) and the workers that reach that cluster.
const (
	// ObjectQueue is the task queue of the workers given a control cluster
	// (--control-namespace): they write apps' status to their objects.
	ObjectQueue = "ferry-objects"
	// ActivityPublishObjectStatus writes the app's current status to its
	// Application object's status subresource (ObjectStatusInput). The
	// app's workflow runs it when its status changed, at most once every
	// few seconds: an idle app writes nothing.
	ActivityPublishObjectStatus = "PublishObjectStatus"
)

// ObjectStatusInput names the app whose status to write, and its object.
// It carries no status: the activity asks the app for its latest (the
// status query), so the history holds no copy of it.
type ObjectStatusInput struct {
	App string `json:"app"`
	// Object is the Application object, "namespace/name".
	Object string `json:"object"`
}
