import CredFile

/// The `--help` texts.
enum Help {
    static let overview = """
        credfile: a hardened manager for `usuario,contraseña` credential files.

        Usage: credfile <command> [options] [--] <arguments>

        Commands:
          add FILE USER       register a user (hashed; --plaintext for the legacy form)
          verify FILE USER    log in: exit 0 granted, 1 denied (--upgrade rehashes weak entries)
          passwd FILE USER    change a password
          delete FILE USER    remove every entry of a user
          import FILE         add or update many users from `user,password` lines on stdin
          list FILE           users and how each is stored (never secrets)
          check FILE          lint: FILE:LINE: error|warning: …; exit 1 on errors
          upgrade FILE        hash every plaintext entry (--dry-run, --jobs N)
          hash                print the hash of the password on stdin
          login FILE          the seed app's login screen
          register FILE       the seed app's register screen
          calibrate           rounds that fit a time per login on this machine (--target-ms N)
          pam FILE            login check for pam_exec.so expose_authtok ($PAM_USER, stdin)
          checkpassword FILE PROG [ARG…]   qmail/Dovecot checkpassword (fd 3; exit 1/2/111)
          helper FILE --protocol squid     Squid basic-auth helper (OK/ERR/BH, channel IDs)
          export FILE --to ldif            LDIF for OpenLDAP pw-pbkdf2 (--base-dn DN)

        Passwords are read from standard input (one line) or, on a terminal, from a
        no-echo prompt. No option takes a password.

        Options (every command accepts these):
          --iterations N          PBKDF2 rounds for new hashes and the work of a login
                                  (default 1200000; below 600000 warns)
          --algorithm sha256|sha512   PBKDF2 PRF (default sha256)
          --json                  JSON output (list, check, upgrade, export)
          --help, --version
        Options of some commands: --plaintext, --upgrade, --backup, --dry-run, --jobs N,
        --target-ms N, --protocol squid, --to ldif, --base-dn DN, --skip-unexportable.
        Options may stand anywhere (for checkpassword, before PROG); `--` ends them.

        Exit: 0 ok/granted, 1 denied or check errors, 2 usage, 3 user exists/missing,
        4 file unusable as asked, 5 I/O or lock error.

        """

    static func text(for command: Command) -> String {
        let usage = "Usage: credfile \(([command.rawValue] + command.arguments).joined(separator: " ")) [options]\n\n"
        let body: String
        switch command {
        case .add:
            body = """
                Registers USER with a new password (asked twice on a terminal, else one line of
                stdin). Stored as a salted PBKDF2 hash, or as legacy plaintext with --plaintext.
                Creates FILE (mode 0600) when missing. Exit 3 when USER already has an entry.
                Options: --plaintext, --backup (keep FILE.bak), --iterations N, --algorithm A.
                """
        case .verify:
            body = """
                Checks USER's password (one line of stdin, or a no-echo prompt). Exit 0 when
                granted, 1 when denied, with the same message and time for an unknown user.
                --upgrade rehashes a plaintext or weaker entry after a successful login.
                """
        case .passwd:
            body = "Changes USER's password in place (exit 3 when USER is missing). Options: --plaintext, --backup."
        case .delete:
            body = "Removes every entry of USER, duplicates included (exit 3 when missing). Option: --backup."
        case .import:
            body = """
                Adds or updates the users of `user,password` lines on stdin (like chpasswd), in one
                rewrite: one bad line and nothing is written. Options: --plaintext, --backup, --jobs N.
                """
        case .list:
            body = "Lists the users (first entry of each name) and how each is stored. Option: --json."
        case .check:
            body = """
                Reports every problem as FILE:LINE: error: … or FILE:LINE: warning: …
                Exit 1 when there is an error. Option: --json.
                """
        case .upgrade:
            body = """
                Hashes every plaintext entry in one atomic rewrite, on all cores (--jobs N), with a
                progress bar on a terminal. Idempotent. --dry-run says what it would do; --json
                prints a summary; --backup keeps FILE.bak.
                """
        case .hash:
            body = "Prints the hash string of the password on stdin (or asked twice on a terminal)."
        case .login:
            body = "The seed app's login screen: asks for username and password (no echo)."
        case .register:
            body = "The seed app's register screen: asks for username and password (twice, no echo)."
        case .calibrate:
            body = """
                Measures PBKDF2 on this machine and prints the rounds that fit --target-ms N
                milliseconds per login (default 250), with the OWASP floor, the default, and
                what OpenSSL's own PKCS5_PBKDF2_HMAC would afford. Option: --algorithm A.
                """
        case .pam:
            body = """
                The login check for Linux-PAM: auth required pam_exec.so expose_authtok quiet
                /usr/bin/credfile pam FILE. User from $PAM_USER, password on stdin to EOF.
                Exit 0 granted, 1 denied (nothing printed), 2 misuse, 5 I/O. Option: --upgrade.
                """
        case .checkpassword:
            body = """
                The qmail checkpassword interface (Dovecot 2.3 passdb checkpassword): reads
                user\\0password\\0timestamp\\0 from fd 3; granted: runs PROG [ARG…]; denied: exit 1;
                misuse: exit 2; temporary failure: exit 111. credfile's options go before PROG;
                everything after PROG is PROG's.
                """
        case .helper:
            body = """
                A Squid basic-auth helper (--protocol squid): one `user password` line per request,
                URL-escaped, answered OK / ERR / BH; channel IDs (concurrency=N) are repeated and
                answered on all cores. Runs until end of input; FILE is re-read at every request.
                """
        case .export:
            body = """
                Prints an LDIF entry per user for OpenLDAP with pw-pbkdf2 (--to ldif; --base-dn DN,
                default \(LDIFExport.defaultBaseDN)). Entries that cannot be exported are reported
                and nothing is printed (exit 4), unless --skip-unexportable. Option: --json.
                """
        }
        return usage + body + "\n"
    }
}
