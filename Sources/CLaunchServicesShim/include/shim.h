int ls_placeholder(void);
