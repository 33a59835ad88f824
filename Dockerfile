# hookrelay on Debian 13 (trixie) slim: the release binary, nothing else (docs/operations.md, "Containers").
#
# Build the binary first, then the image, from the repository root:
#   bun scripts/build.ts && docker build -t hookrelay .
# or put a release file in dist/ and name it:
#   docker build --build-arg HOOKRELAY_BINARY=dist/hookrelay-0.1.0-linux-arm64 -t hookrelay .
#
# The binary links only glibc (libc, libpthread, libdl, libm: `ldd dist/hookrelay`)
# and carries its own TLS root certificates, so the slim base needs no package.
FROM debian:trixie-slim

ARG HOOKRELAY_BINARY=dist/hookrelay

# A fixed uid and gid, so that a bind-mounted data dir can be chowned to it on the host.
RUN groupadd --system --gid 10001 hookrelay \
    && useradd --system --uid 10001 --gid hookrelay --home-dir /data --no-create-home --shell /usr/sbin/nologin hookrelay \
    && mkdir -m 0700 /data \
    && chown hookrelay:hookrelay /data

COPY --chmod=0755 ${HOOKRELAY_BINARY} /usr/local/bin/hookrelay

ENV HOOKRELAY_DATA_DIR=/data \
    HOOKRELAY_PORT=8080

USER hookrelay:hookrelay
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080

# healthcheck asks GET /readyz on 127.0.0.1:$HOOKRELAY_PORT (ready: the database answers)
# and gives up after 5 s, within the 10 s Docker allows it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["hookrelay", "healthcheck"]

# serve drains on SIGTERM (docs/operations.md, "Stopping: SIGTERM drains"): give
# `docker stop` more than HOOKRELAY_SHUTDOWN_TIMEOUT_MS, e.g. --stop-timeout 30.
STOPSIGNAL SIGTERM
ENTRYPOINT ["hookrelay"]
CMD ["serve"]
