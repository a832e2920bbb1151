// Package syncplan orders a sync: which objects the Sync phase applies, in
// which wave, and in which steps within a wave. It is data only; package
// kube carries the plan out.
//
// The order is Argo CD's, so that repositories written for Argo CD deploy
// the same way:
//
//  1. Phase. Objects annotated argocd.argoproj.io/hook (or helm.sh/hook)
//     are hooks: they run in the PreSync, Sync, PostSync or SyncFail phase
//     of the hook runner, never in the Sync phase's apply. Hook(obj) tells
//     them apart; Build refuses none of them, it leaves them out.
//  2. Wave: the integer argocd.argoproj.io/sync-wave annotation, 0 when
//     absent, negative allowed. Every wave is applied and healthy before
//     the next one starts.
//  3. Kind, in the Helm-derived order Argo CD uses (KindOrder): Namespace,
//     NetworkPolicy, ResourceQuota, …, Deployment, …, Ingress, APIService,
//     then every other kind (custom resources). Each kind of a wave is one
//     step; the objects of a step are applied in parallel.
//  4. Name (then namespace), so the order never depends on the input's.
//
// Namespaces and CustomResourceDefinitions go before what needs them even
// when their own wave is later: a Namespace moves to the earliest wave of
// the objects in it, a CRD to the earliest wave of its custom resources.
//
//	plan, errs := syncplan.Build(objs)
//	for _, w := range plan.Waves {
//		for _, step := range w.Steps {
//			// apply objs[i] for every i in step, in parallel
//		}
//		// wait until wave w is healthy
//	}
package syncplan
