// libpq, opened at the first use of a PostgreSQL state database (SPEC §15), not linked:
// libpq brings Kerberos, LDAP and GnuTLS with it (24 shared objects), and only a
// `state = postgresql://…` needs it, so every other start of every program built on
// CredFile maps none of them (issue #34 item 9's rule, as ldapprep.c does for ICU). The
// calls keep libpq's own names and types (the header is <libpq-fe.h>, module CPostgreSQL);
// Swift calls them through the table `credfile_libpq()` returns, from one file,
// Sources/CredFile/Internals/PostgreSQL.swift.
#include "CCredFile.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define LIBPQ_SONAME "libpq.so.5"

static struct credfile_libpq libpq;
static int libpqState;  // after libpqOnce: 1 loaded, -1 missing (libpqError says why)
static char libpqError[512];
static pthread_once_t libpqOnce = PTHREAD_ONCE_INIT;

/// A notice (`NOTICE: relation … already exists, skipping`) goes nowhere: libpq's default
/// writes it to standard error, which is a login check's answer channel for some callers.
static void ignore_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

static void quiet(PGconn *connection) {
    if (connection) libpq.PQsetNoticeProcessor(connection, ignore_notice, NULL);
}

#define LOOK_UP(name) (libpq.name = (__typeof__(libpq.name))dlsym(handle, #name))

static void libpq_open(void) {
    void *handle = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    int found = handle != NULL;
    if (handle) {
        found = LOOK_UP(PQconnectdbParams) && LOOK_UP(PQstatus) && LOOK_UP(PQerrorMessage) && LOOK_UP(PQfinish) &&
                LOOK_UP(PQexec) && LOOK_UP(PQexecParams) && LOOK_UP(PQresultStatus) &&
                LOOK_UP(PQresultErrorField) && LOOK_UP(PQresultErrorMessage) && LOOK_UP(PQclear) && LOOK_UP(PQntuples) && LOOK_UP(PQnfields) && LOOK_UP(PQgetvalue) &&
                LOOK_UP(PQgetlength) && LOOK_UP(PQgetisnull) && LOOK_UP(PQftype) && LOOK_UP(PQcmdTuples) &&
                LOOK_UP(PQconninfoParse) && LOOK_UP(PQconninfoFree) && LOOK_UP(PQfreemem) &&
                LOOK_UP(PQsetNoticeProcessor) && LOOK_UP(PQtransactionStatus) && LOOK_UP(PQconsumeInput) && LOOK_UP(PQnotifies) &&
                LOOK_UP(PQenterPipelineMode) &&
                LOOK_UP(PQexitPipelineMode) && LOOK_UP(PQpipelineStatus) && LOOK_UP(PQpipelineSync) &&
                LOOK_UP(PQsendPrepare) && LOOK_UP(PQsendQueryPrepared) && LOOK_UP(PQgetResult);
    }
    if (found) {
        libpq.quiet = quiet;
        libpqState = 1;
    } else {
        const char *reason = dlerror();
        snprintf(libpqError, sizeof libpqError, "cannot load %s (Debian package libpq5, 14 or later): %s",
                 LIBPQ_SONAME, reason ? reason : "a function is missing");
        libpqState = -1;
    }
}

const struct credfile_libpq *credfile_libpq(const char **error) {
    pthread_once(&libpqOnce, libpq_open);
    if (libpqState == 1) return &libpq;
    *error = libpqError;
    return NULL;
}
