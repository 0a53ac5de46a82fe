// Package noroute answers the requests that no route serves, for package
// route's Unrouted and package gateway's catch-all: one message, one
// choice between 404 and 405, in the error shape of the path's family.
package noroute

import (
	"fmt"
	"net/http"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// Write answers r, which no route served, in the error shape of its path's
// family (apierrors.ShapeFor), with rd's logger: 405 method_not_allowed
// naming allow (the Allow header too) when other methods are served on
// the path, and 404 not_found otherwise.
func Write(w http.ResponseWriter, r *http.Request, rd apierrors.Renderer, allow []string) {
	err := apierrors.NotFound(fmt.Sprintf("Unknown request URL: %s %s. Please check the URL and the method.", apierrors.Echo(r.Method), apierrors.Echo(r.URL.Path)))
	if len(allow) > 0 {
		err = apierrors.MethodNotAllowed(r.Method, r.URL.Path, allow)
	}
	rd.Shape = apierrors.ShapeFor(r)
	rd.Write(w, r, err)
}
