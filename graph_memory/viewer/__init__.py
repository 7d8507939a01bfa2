"""Every read for one viewer (and the notes a viewer files): each public function takes `viewer=`
and starts from the wall's cases that viewer may open."""
