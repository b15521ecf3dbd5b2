"""ETags on the API's detail reads: a client that polls a run or a package sends If-None-Match and gets a
304 with no body while nothing changed. The tag is the answer's own digest, so it changes with anything the
reader would see, including what their role shows them."""

from django.utils.cache import get_conditional_response, set_response_etag

from core.pagination import MAX_PAGE_SIZE


class DetailETagMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.method not in ("GET", "HEAD") or response.status_code != 200 or response.has_header("ETag"):
            return response
        view = getattr(response, "renderer_context", {}).get("view")
        if getattr(view, "action", None) != "retrieve":
            return response
        set_response_etag(response)
        return get_conditional_response(request, etag=response["ETag"], response=response)


def schema_conventions(result, generator, request, public):
    """drf-spectacular postprocessing: the schema says what lists and detail reads answer beside their body."""
    for path, operations in result.get("paths", {}).items():
        read = operations.get("get")
        if not read:
            continue
        names = {parameter.get("name") for parameter in read.get("parameters", [])}
        ok = read.get("responses", {}).get("200")
        if ok is not None and "page_size" in names:
            ok.setdefault("headers", {}).update(LINK_HEADER)
            read["responses"].setdefault("400", BAD_PAGE)
            for parameter in read["parameters"]:
                if parameter.get("name") == "page_size":
                    parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}
        if ok is not None and path.endswith("}/") and "page_size" not in names and _is_retrieve(read):
            ok.setdefault("headers", {}).update(ETAG_HEADER)
            read.setdefault("parameters", []).append(IF_NONE_MATCH)
            read["responses"]["304"] = {"description": "Not modified: the If-None-Match tag is still current."}
    return result


BAD_PAGE = {
    "description": "A page_size out of bounds, or another query parameter the list cannot read.",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def _is_retrieve(operation) -> bool:
    return operation.get("operationId", "").endswith("_retrieve")


LINK_HEADER = {
    "Link": {
        "description": 'RFC 8288 links to the neighbouring pages: `<url>; rel="next"`, `<url>; rel="prev"`.',
        "schema": {"type": "string"},
    }
}
ETAG_HEADER = {
    "ETag": {"description": "The answer's tag; send it back in If-None-Match.", "schema": {"type": "string"}}
}
IF_NONE_MATCH = {
    "in": "header",
    "name": "If-None-Match",
    "schema": {"type": "string"},
    "description": "An ETag from an earlier read: a 304 with no body while it is still current.",
}
