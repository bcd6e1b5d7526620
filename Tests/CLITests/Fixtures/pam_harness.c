/* pam_harness SERVICE USER CONFDIR: reads the password from stdin (one line) and runs
   pam_authenticate through pam_start_confdir; prints the PAM result code and name. */
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char password[8192];

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *r = calloc((size_t)n, sizeof *r);
    if (r == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == PAM_PROMPT_ECHO_ON)
            r[i].resp = strdup(password);
    }
    *resp = r;
    return PAM_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: pam_harness SERVICE USER CONFDIR\n"); return 2; }
    if (fgets(password, sizeof password, stdin) == NULL) password[0] = 0;
    password[strcspn(password, "\n")] = 0;
    struct pam_conv conv = { conversation, NULL };
    pam_handle_t *pamh = NULL;
    int rc = pam_start_confdir(argv[1], argv[2], &conv, argv[3], &pamh);
    if (rc != PAM_SUCCESS) { printf("start %d\n", rc); return 3; }
    rc = pam_authenticate(pamh, 0);
    printf("%d %s\n", rc, pam_strerror(pamh, rc));
    pam_end(pamh, rc);
    return 0;
}
