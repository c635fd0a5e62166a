;;; taskdsl.el --- taskdsl templates (*.task.xml) in Emacs with eglot  -*- lexical-binding: t -*-

;; Works with Emacs 28 + eglot 1.9 (Debian: apt-get install emacs elpa-eglot) and Emacs 29+
;; (eglot built in).
;;
;; Usage, in your init file:
;;
;;   (setq taskdsl-python "/path/to/venv/bin/python")   ; where `pip install /path/to/taskdsl' went
;;   (load "/path/to/taskdsl/editors/emacs/taskdsl.el")
;;   ;; optional: settings sent to the server (workspace/configuration, section "taskdsl")
;;   (setq taskdsl-settings '(:model "gpt-4o-mini" :globals ["today"] :run (:allowScripts :json-false)))
;;
;; What it sets up:
;;   - `taskxml-mode', derived from `nxml-mode', for files named *.task.xml and *.test.xml;
;;   - an `eglot-server-programs' entry starting "<python> -m taskdsl serve" (stdio) for it;
;;   - `eglot-ensure' in `taskxml-mode-hook' (unless `taskdsl-auto-start' is nil);
;;   - `taskdsl-run-task': runs the current template (server command taskdsl.runTask),
;;     asking for missing inputs in the minibuffer.
;; Diagnostics appear through Flymake (M-x flymake-show-buffer-diagnostics), hover through
;; ElDoc, completion through `completion-at-point', code actions with M-x eglot-code-actions.

;;; Code:

(require 'nxml-mode)
(require 'eglot)
(require 'subr-x)
(require 'cl-lib)
(require 'jsonrpc)

(defgroup taskdsl nil
  "Support for taskdsl XML task templates."
  :group 'languages
  :prefix "taskdsl-")

(defcustom taskdsl-python
  (let ((venv (getenv "VIRTUAL_ENV")))
    (if (and venv (file-executable-p (expand-file-name "bin/python" venv)))
        (expand-file-name "bin/python" venv)
      "python3"))
  "Python interpreter with the taskdsl package installed.
The server runs as PYTHON -m taskdsl serve."
  :type 'string)

(defcustom taskdsl-server-command nil
  "Full command line of the language server, overriding `taskdsl-python'.
For example (\"taskdsl\" \"serve\")."
  :type '(choice (const :tag "Use taskdsl-python" nil) (repeat string)))

(defcustom taskdsl-settings nil
  "Settings of the server, a plist: the \"taskdsl\" configuration section.
Keys: :files :libraryPaths :globals :model :run (:allowScripts :timeout)
:trace (:dir) :debounce.  Use vectors for lists and :json-false for false:
  (:model \"gpt-4o-mini\" :libraryPaths [\"~/templates\"]
   :run (:allowScripts :json-false))"
  :type 'plist)

(defcustom taskdsl-auto-start t
  "Start eglot automatically in `taskxml-mode' buffers."
  :type 'boolean)

;;;###autoload
(define-derived-mode taskxml-mode nxml-mode "TaskXML"
  "Major mode for taskdsl templates: `nxml-mode' plus the taskdsl language server.")

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.task\\.xml\\'" . taskxml-mode))
;;;###autoload
(add-to-list 'auto-mode-alist '("\\.test\\.xml\\'" . taskxml-mode))  ; test files, checked too

(defun taskdsl-server-contact (&optional _interactive)
  "The command eglot runs for `taskxml-mode' buffers."
  (or taskdsl-server-command
      (list taskdsl-python "-m" "taskdsl" "serve")))

(add-to-list 'eglot-server-programs '(taskxml-mode . taskdsl-server-contact))

;; Answer workspace/configuration for the "taskdsl" section with `taskdsl-settings', unless
;; the user (or a .dir-locals.el) already set `eglot-workspace-configuration'.
(defun taskdsl--workspace-configuration (_server)
  (list :taskdsl (or taskdsl-settings (make-hash-table))))

(when (null (default-value 'eglot-workspace-configuration))
  (setq-default eglot-workspace-configuration #'taskdsl--workspace-configuration))

(defun taskdsl--maybe-start ()
  (when (and taskdsl-auto-start buffer-file-name)
    (eglot-ensure)))

(add-hook 'taskxml-mode-hook #'taskdsl--maybe-start)

(defun taskdsl--missing-input (text)
  "The input name an error TEXT of the server says is missing, or nil."
  (when (and text
             (or (string-match "[Mm]issing \\(?:required \\)?inputs?[: ]+['\"`‘“]?\\([A-Za-z_][A-Za-z0-9_]*\\)" text)
                 (string-match "inputs? ['\"`‘“]\\([A-Za-z_][A-Za-z0-9_]*\\)['\"`’”] \\(?:is \\|has \\)?\\(?:missing\\|required\\|no value\\)" text)))
    (match-string 1 text)))

;; jsonrpc 1.0.9 (Emacs 28) needs a timeout on async requests; runs can take long
(defcustom taskdsl-run-timeout 600
  "Seconds to wait for a run started with `taskdsl-run-task'."
  :type 'number)

(defvar taskdsl-run-hook nil
  "Functions called with the result plist of each `taskdsl-run-task'.
The argument is nil when the run failed.")

(defun taskdsl--inputs-object (inputs)
  (let ((h (make-hash-table :test 'equal)))
    (dolist (kv inputs h) (puthash (car kv) (cdr kv) h))))

(defun taskdsl--failed-text (result)
  "The error text of a FAILED RESULT plist, or nil."
  (when (and (listp result) (equal (plist-get result :status) "FAILED"))
    (let ((err (plist-get result :error)))
      (or (and (listp err) (plist-get err :message)) (format "%s" err)))))

(defun taskdsl--show-run (result text)
  (with-current-buffer (get-buffer-create "*taskdsl run*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (if text
                  (format "Run failed: %s\n" text)
                (format "%s\n" (or (and (listp result) (plist-get result :content)) result)))))
    (special-mode)
    (display-buffer (current-buffer)))
  (run-hook-with-args 'taskdsl-run-hook (unless text result)))

(defun taskdsl-run-task (&optional inputs)
  "Run the template of the current buffer (server command taskdsl.runTask).
INPUTS is an alist of (NAME . VALUE).  Inputs the server reports missing
are asked for in the minibuffer.  The run goes on in the background; its
result shows in the buffer *taskdsl run*."
  (interactive)
  (let ((server (eglot--current-server-or-lose))
        (uri (eglot--path-to-uri (buffer-file-name)))
        (asked nil))
    (cl-labels
        ((attempt
          (inputs)
          (jsonrpc-async-request
           server :workspace/executeCommand
           `(:command "taskdsl.runTask" :arguments [,uri nil ,(taskdsl--inputs-object inputs)])
           :timeout taskdsl-run-timeout
           :success-fn (lambda (result) (retry-or-show inputs result (taskdsl--failed-text result)))
           :error-fn (lambda (err)
                       (retry-or-show inputs nil (or (plist-get err :message) (format "%S" err))))
           :timeout-fn (lambda () (taskdsl--show-run nil "timed out"))))
         (retry-or-show
          (inputs result text)
          (let ((name (taskdsl--missing-input text)))
            (if (and name (not (member name asked)))
                (progn (push name asked)
                       (attempt (cons (cons name (read-string (format "taskdsl input %s: " name))) inputs)))
              (when text (message "taskdsl: run failed: %s" text))
              (taskdsl--show-run result text)))))
      (message "taskdsl: running %s…" (file-name-nondirectory (buffer-file-name)))
      (attempt (copy-alist inputs)))))

(provide 'taskdsl)
;;; taskdsl.el ends here
