;;; harness.el --- batch Emacs + eglot harness for tests/e2e/test_emacs.py  -*- lexical-binding: t -*-
;; Loads the user-facing config editors/emacs/taskdsl.el, opens the templates and records what a
;; user would see: Flymake diagnostics, a hover and a completion list, as JSON in $TASKDSL_E2E_OUT.
;;
;;   emacs --batch -Q -l harness.el
;; env: TASKDSL_E2E_CONFIG, TASKDSL_E2E_PYTHON, TASKDSL_E2E_OUT, TASKDSL_E2E_BAD, TASKDSL_E2E_TYPO,
;;      TASKDSL_E2E_HELLO (runnable template with the input `name'),
;;      TASKDSL_E2E_TESTFILE (a *.test.xml file with TD501),
;;      TASKDSL_E2E_PACKAGES (package-user-dir of this run)
(require 'package)
(setq package-user-dir (or (getenv "TASKDSL_E2E_PACKAGES") (make-temp-file "elpa" t)))
;; -Q skips Debian's site-start, which puts the elpa-* packages on the load path
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'json)
(require 'cl-lib)

(setq taskdsl-python (getenv "TASKDSL_E2E_PYTHON")
      taskdsl-auto-start nil          ; batch mode runs no commands, so eglot-ensure would never fire
      taskdsl-settings '(:debounce 50))
(load (getenv "TASKDSL_E2E_CONFIG") nil t)
(setq eglot-sync-connect 60 eglot-connect-timeout 60 eglot-autoshutdown t)

(defvar e2e-result nil)
(defvar e2e-t0 (float-time))
(defvar e2e-messages nil)
(defvar e2e-published nil)

(defun e2e-put (key value) (push (cons key value) e2e-result))
(defun e2e-ms () (round (* 1000 (- (float-time) e2e-t0))))
(defun e2e-finish (code)
  (e2e-put 'total_ms (e2e-ms))
  (with-temp-file (getenv "TASKDSL_E2E_OUT")
    (insert (json-encode e2e-result)))
  (kill-emacs code))

(cl-defmethod eglot-handle-notification :before (_server (_m (eql window/showMessage)) &key message &allow-other-keys)
  (push message e2e-messages))
(cl-defmethod eglot-handle-notification :before (_server (_m (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (push (list (cons 'uri uri) (cons 'diagnostics diagnostics)) e2e-published))

(defun e2e-wait (pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun e2e-open (file)
  "Visit FILE (taskxml-mode from the config), connect eglot as `eglot-ensure' would, return diagnostics."
  (find-file file)
  (unless (eglot-current-server)
    (apply #'eglot--connect (eglot--guess-contact)))
  ;; batch Emacs never displays the buffer, so Flymake's deferred start never fires
  (flymake-start nil t)
  (e2e-wait (lambda () (flymake-diagnostics)) 60)
  (list (cons 'mode (symbol-name major-mode))
        (cons 'managed (and (eglot-managed-p) t))
        (cons 'ms (e2e-ms))
        (cons 'diagnostics
              (vconcat (mapcar (lambda (d)
                                 (let ((beg (flymake-diagnostic-beg d)) (end (flymake-diagnostic-end d)))
                                   `((text . ,(flymake-diagnostic-text d))
                                     (type . ,(symbol-name (flymake-diagnostic-type d)))
                                     (line . ,(1- (line-number-at-pos beg)))
                                     (col . ,(save-excursion (goto-char beg) (current-column)))
                                     (end_col . ,(save-excursion (goto-char end) (current-column))))))
                               (flymake-diagnostics))))))

(defun e2e-labels (completion)
  (let ((items (if (vectorp completion) completion (plist-get completion :items))))
    (vconcat (mapcar (lambda (item) (plist-get item :label)) items))))

(condition-case err
    (let* ((bad (e2e-open (getenv "TASKDSL_E2E_BAD")))
           (server (eglot-current-server)))
      (e2e-put 'bad bad)
      ;; hover on the `fresh_context' element name: line 5 (1-based), column 7
      (goto-char (point-min)) (forward-line 4) (forward-char 7)
      (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
        (e2e-put 'hover (and hover (eglot--hover-info (plist-get hover :contents)))))
      ;; completion inside <task>: the user types "  <" on a new line before </task>
      (goto-char (point-min)) (forward-line 6)
      (insert "  <\n")
      (forward-line -1) (end-of-line)
      (eglot--signal-textDocument/didChange)
      (condition-case cerr
          (let ((completion (jsonrpc-request server :textDocument/completion
                                             (append (eglot--TextDocumentPositionParams)
                                                     '(:context (:triggerKind 2 :triggerCharacter "<"))))))
            (e2e-put 'completion (e2e-labels completion)))
        (error (e2e-put 'completion_error (format "%S" cerr))))
      (e2e-put 'typo (e2e-open (getenv "TASKDSL_E2E_TYPO")))
      ;; a test file (*.test.xml) gets the mode and the server too
      (when (getenv "TASKDSL_E2E_TESTFILE")
        (e2e-put 'testfile (e2e-open (getenv "TASKDSL_E2E_TESTFILE"))))
      ;; run the runnable template with the config's command, its input given as an argument
      (when (getenv "TASKDSL_E2E_HELLO")
        (find-file (getenv "TASKDSL_E2E_HELLO"))
        (let ((run-result 'pending))
          (add-hook 'taskdsl-run-hook (lambda (r) (setq run-result r)))
          (taskdsl-run-task '(("name" . "World")))
          (e2e-wait (lambda () (not (eq run-result 'pending))) 180)
          (e2e-put 'run (list (cons 'done (not (eq run-result 'pending)))
                              (cons 'ms (e2e-ms))
                              (cons 'buffer (with-current-buffer (get-buffer-create "*taskdsl run*")
                                              (buffer-string)))
                              (cons 'status (and (listp run-result) (plist-get run-result :status)))))))
      (e2e-put 'published (length e2e-published))
      (e2e-put 'messages (vconcat e2e-messages))
      (set-buffer-modified-p nil)
      (eglot-shutdown server)
      (e2e-finish 0))
  (error (e2e-put 'error (format "%S" err))
         (e2e-put 'messages (vconcat e2e-messages))
         (e2e-finish 1)))
